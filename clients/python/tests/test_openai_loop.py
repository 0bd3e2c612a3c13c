"""`with_whetstone` with an OpenAI-SDK stand-in: each turn routed, model_tools offered, the tools the
caller registered run, every call reported with its success or error, the reply returned."""

import unittest
from typing import Any, Dict, List, Optional

from fakes import BadRequestError, FakeOpenAI, completion, tool_call
from support import live_client

from whetstone import with_whetstone

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather and forecast for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


class RecordingWhetstone:
    """The two methods the loop calls, answering like the API and keeping what was reported."""

    def __init__(self) -> None:
        self.routes: List[Dict[str, Any]] = []
        self.reported: List[Dict[str, Any]] = []

    def route(self, request: str, *, conversation_id: Optional[str] = None, k: Optional[int] = None) -> Any:
        self.routes.append({"request": request, "conversation_id": conversation_id, "k": k})
        return {"turn_id": "turn-1", "routed": True, "tools": [{"name": "get_weather", "rank": 1, "score": 1.0}], "model_tools": [WEATHER_TOOL]}

    def record_calls(self, calls: List[Any]) -> Any:
        self.reported.extend(calls)
        return {"accepted": len(calls), "duplicates": 0}


def get_weather(city: str) -> Dict[str, Any]:
    if city == "Atlantis":
        return {"error": "unknown city"}
    if city == "":
        raise ValueError("city must not be empty")
    return {"city": city, "forecast": "rain"}


class LoopTest(unittest.TestCase):
    def test_runs_the_tool_the_model_calls_reports_it_and_returns_the_reply(self) -> None:
        openai = FakeOpenAI([
            completion(tool_calls=[tool_call("call_1", "get_weather", '{"city": "Lisbon"}')]),
            completion(content="Rain in Lisbon tomorrow."),
        ])
        ws = RecordingWhetstone()
        agent = with_whetstone(openai, ws, model="gpt-4o-mini", handlers={"get_weather": get_weather}, k=3, params={"temperature": 0})
        run = agent.run("will it rain in Lisbon?", conversation_id="c-1")

        self.assertEqual(run.reply, "Rain in Lisbon tomorrow.")
        self.assertEqual(ws.routes, [{"request": "will it rain in Lisbon?", "conversation_id": "c-1", "k": 3}])
        self.assertEqual(openai.requests[0]["tools"], [WEATHER_TOOL])
        self.assertEqual((openai.requests[0]["model"], openai.requests[0]["temperature"]), ("gpt-4o-mini", 0))
        self.assertEqual(openai.requests[1]["messages"][-1], {"role": "tool", "tool_call_id": "call_1", "content": '{"city": "Lisbon", "forecast": "rain"}'})
        self.assertEqual(ws.reported, [{
            "id": "turn-1:call_1", "tool": "get_weather", "arguments": {"city": "Lisbon"}, "success": True,
            "request": "will it rain in Lisbon?", "turn_id": "turn-1", "conversation_id": "c-1",
        }])
        self.assertEqual(run.recorded, {"accepted": 1, "duplicates": 0})
        self.assertEqual([m["role"] for m in run.messages], ["user", "assistant", "tool", "assistant"])

    def test_invalid_json_arguments_an_error_result_and_a_raise_are_failed_calls(self) -> None:
        openai = FakeOpenAI([
            completion(tool_calls=[
                tool_call("call_1", "get_weather", '{"city": "Lis'),
                tool_call("call_2", "get_weather", '["Lisbon"]'),
                tool_call("call_3", "get_weather", '{"city": "Atlantis"}'),
                tool_call("call_4", "get_weather", '{"city": ""}'),
                tool_call("call_5", "get_weather", '{"town": "Porto"}'),
            ]),
            completion(content="Sorry."),
        ])
        ws = RecordingWhetstone()
        run = with_whetstone(openai, ws, model="m", handlers={"get_weather": get_weather}).run("weather?")

        outcomes = [(c["id"], c["arguments"], c["success"], c.get("error")) for c in ws.reported]
        self.assertEqual(outcomes, [
            ("turn-1:call_1", {}, False, "the arguments are not a JSON object"),
            ("turn-1:call_2", {}, False, "the arguments are not a JSON object"),
            ("turn-1:call_3", {"city": "Atlantis"}, False, "unknown city"),
            ("turn-1:call_4", {"city": ""}, False, "city must not be empty"),
            ("turn-1:call_5", {"town": "Porto"}, False, "get_weather() got an unexpected keyword argument 'town'"),
        ])
        # The model is told each error, so it can try again.
        tool_messages = [m["content"] for m in openai.requests[1]["messages"] if m["role"] == "tool"]
        self.assertEqual(tool_messages[0], '{"error": "the arguments are not a JSON object"}')
        self.assertEqual(tool_messages[2], '{"error": "unknown city"}')
        self.assertEqual(run.reply, "Sorry.")

    def test_a_tool_with_no_handler_is_answered_but_not_reported(self) -> None:
        openai = FakeOpenAI([
            completion(tool_calls=[tool_call("call_1", "send_email", "{}")]),
            completion(content="I cannot send email."),
        ])
        ws = RecordingWhetstone()
        run = with_whetstone(openai, ws, model="m", handlers={"get_weather": get_weather}).run("email Ana")
        self.assertEqual(openai.requests[1]["messages"][-1]["content"], '{"error": "no tool named send_email"}')
        self.assertEqual((ws.reported, run.recorded, run.calls), ([], None, []))

    def test_calls_already_run_are_reported_when_a_later_model_call_fails(self) -> None:
        openai = FakeOpenAI([completion(tool_calls=[tool_call("call_1", "get_weather", '{"city": "Lisbon"}')])])
        ws = RecordingWhetstone()
        with self.assertRaises(BadRequestError):
            with_whetstone(openai, ws, model="m", handlers={"get_weather": get_weather}).run("weather?")
        self.assertEqual([(c["tool"], c["success"]) for c in ws.reported], [("get_weather", True)])

    def test_stops_after_max_steps(self) -> None:
        again = [completion(tool_calls=[tool_call("call_%d" % i, "get_weather", '{"city": "Lisbon"}')]) for i in range(3)]
        ws = RecordingWhetstone()
        run = with_whetstone(FakeOpenAI(again), ws, model="m", handlers={"get_weather": get_weather}, max_steps=2).run("weather?")
        self.assertIsNone(run.reply)
        self.assertEqual([c["id"] for c in ws.reported], ["turn-1:call_0", "turn-1:call_1"])

    def test_against_the_worker_the_turn_and_its_calls_are_logged(self) -> None:
        ws = live_client()
        ws.register_tools([WEATHER_TOOL])
        openai = FakeOpenAI([
            completion(tool_calls=[tool_call("call_1", "get_weather", '{"city": "Atlantis"}')]),
            completion(tool_calls=[tool_call("call_2", "get_weather", '{"city": "Lisbon"}')]),
            completion(content="Rain."),
        ])
        run = with_whetstone(openai, ws, model="m", handlers={"get_weather": get_weather}).run("weather forecast for Lisbon?", conversation_id="c-1")
        self.assertEqual(run.recorded, {"accepted": 2, "duplicates": 0})
        self.assertEqual(openai.requests[0]["tools"][0]["function"]["name"], "get_weather")
        buckets = ws.tool_activity("get_weather", bucket="hour", span=1)["buckets"]
        self.assertEqual([(b["calls"], b["failures"], b["offers"]) for b in buckets], [(2, 1, 1)])


if __name__ == "__main__":
    unittest.main()
