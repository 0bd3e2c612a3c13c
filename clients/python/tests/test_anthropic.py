"""`anthropic_tools` and `anthropic_calls` with an Anthropic-SDK stand-in that checks tools as the
Messages API does."""

import unittest

from fakes import FakeAnthropic, tool_use
from support import live_client

from whetstone import anthropic_calls, anthropic_tools

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}
ROUTE = {"turn_id": "turn-1", "routed": True, "tools": [], "model_tools": []}


class AnthropicTest(unittest.TestCase):
    def test_every_route_format_becomes_the_messages_api_tools(self) -> None:
        want = [{"name": "get_weather", "description": "Weather.", "input_schema": SCHEMA}]
        formats = [
            [{"name": "get_weather", "description": "Weather.", "input_schema": SCHEMA}],
            [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": SCHEMA}}],
            [{"name": "get_weather", "description": "Weather.", "inputSchema": SCHEMA}],
        ]
        for model_tools in formats:
            self.assertEqual(anthropic_tools(dict(ROUTE, model_tools=model_tools)), want)
        deferred = [{"name": "get_weather", "description": "Weather.", "inputSchema": SCHEMA, "_meta": {"defer_loading": True}}]
        self.assertEqual(anthropic_tools(dict(ROUTE, model_tools=deferred)), [dict(want[0], defer_loading=True)])

    def test_a_route_from_the_worker_is_accepted_by_the_sdk_and_its_calls_are_reported(self) -> None:
        ws = live_client()
        ws.register_tools([
            {"name": "get_weather", "description": "Current weather and forecast for a city.", "input_schema": SCHEMA},
            {"name": "send_email", "description": "Send an email.", "parameters": {"type": "object", "properties": {"to": {"type": "string"}}}},
        ])
        request = "weather forecast for Lisbon?"
        route = ws.route(request, format="anthropic", k=2)
        client = FakeAnthropic([
            tool_use("toolu_1", "get_weather", {"city": "Lisbon"}),
            tool_use("toolu_2", "get_weather", {"city": "Atlantis"}),
            tool_use("toolu_3", "send_email", {"to": "ana"}),
        ])
        reply = client.messages.create(
            model="claude-sonnet-4-5", max_tokens=1024, tools=anthropic_tools(route),
            messages=[{"role": "user", "content": request}],
        )
        self.assertEqual([t["name"] for t in client.requests[0]["tools"]], ["get_weather", "send_email"])

        results = {"toolu_1": {"forecast": "rain"}, "toolu_2": ValueError("unknown city")}
        calls = anthropic_calls(reply.content, results, route=route, request=request, conversation_id="c-1")
        self.assertEqual([(c["id"], c["success"], c.get("error")) for c in calls], [
            (route["turn_id"] + ":toolu_1", True, None),
            (route["turn_id"] + ":toolu_2", False, "unknown city"),
        ])
        self.assertEqual(ws.record_calls(calls), {"accepted": 2, "duplicates": 0})
        self.assertEqual(ws.record_calls(calls), {"accepted": 0, "duplicates": 2})


if __name__ == "__main__":
    unittest.main()
