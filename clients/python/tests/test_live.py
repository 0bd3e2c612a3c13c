"""The client against the real local Worker (`wrangler dev`, fresh D1): what a user's agent and
approver do, from registering tools to undoing an applied revision, and the errors they meet."""

import unittest
import uuid

from support import live, live_client, new_agent

from whetstone import (
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    Whetstone,
    WhetstoneError,
)

ORDER_TOOLS = [
    {
        "name": "get_order",
        "description": "Look up an order by its id: status, items and delivery date.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
    },
    {
        "type": "function",
        "function": {
            "name": "refund_order",
            "description": "Refund an order, fully or in part.",
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        },
    },
]
REQUESTS = ["where is my order 1234?", "has order 5678 shipped yet?", "status of order ORD-12345 please"]
PREFIX_ERROR = "order_id must start with the ORD- prefix"


def seed_failures(ws: Whetstone) -> None:
    """get_order failed twice with the same error, then succeeded: enough for one revision."""
    ws.register_tools(ORDER_TOOLS)
    calls = []
    for i, request in enumerate(REQUESTS):
        route = ws.route(request, conversation_id="c%d" % i)
        ok = i == 2
        call = {
            "tool": "get_order",
            "arguments": {"order_id": "ORD-12345" if ok else str(1234 + i)},
            "success": ok,
            "request": request,
            "turn_id": route["turn_id"],
        }
        if not ok:
            call["error"] = PREFIX_ERROR
        calls.append(call)
    ws.record_calls(calls)


class AgentTest(unittest.TestCase):
    def test_register_route_and_report_a_call(self) -> None:
        ws = live_client()
        registered = ws.register_tools(ORDER_TOOLS)
        self.assertEqual([(t["name"], t["version"]) for t in registered["tools"]], [("get_order", 1), ("refund_order", 1)])
        # Registering the same definitions again changes nothing.
        self.assertEqual([t["version"] for t in ws.register_tools(ORDER_TOOLS)["tools"]], [1, 1])

        route = ws.route("where is my order ORD-77?", conversation_id="c-1", k=1)
        self.assertTrue(route["routed"])
        self.assertEqual([t["name"] for t in route["tools"]], ["get_order"])
        self.assertEqual(route["model_tools"][0]["function"]["name"], "get_order")

        call = {"tool": "get_order", "arguments": {"order_id": "ORD-77"}, "success": True, "turn_id": route["turn_id"]}
        self.assertEqual(ws.record_calls([call]), {"accepted": 1, "duplicates": 0})
        self.assertEqual(ws.record_calls([dict(call, id="same")]), {"accepted": 1, "duplicates": 0})
        self.assertEqual(ws.record_calls([dict(call, id="same")]), {"accepted": 0, "duplicates": 1})

        activity = ws.tool_activity("get_order", bucket="hour", span=1)
        self.assertEqual(activity["tool"], "get_order")
        self.assertEqual([(b["calls"], b["failures"], b["offers"]) for b in activity["buckets"]], [(2, 0, 1)])

        ws.outcome(route["turn_id"], True, served_by="get_order")
        self.assertEqual(ws.tool("get_order")["name"], "get_order")
        self.assertEqual([t["name"] for t in ws.tools()["tools"]], ["get_order", "refund_order"])
        anthropic = ws.model_tools("anthropic")["tools"]
        self.assertEqual(sorted(anthropic[0]), ["description", "input_schema", "name"])

    def test_a_trace_records_its_calls_once(self) -> None:
        ws = live_client()
        ws.register_tools(ORDER_TOOLS)
        messages = [
            {"role": "user", "content": "refund order ORD-9"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "refund_order", "arguments": '{"order_id": "ORD-9"}'}}
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": '{"error": "refunds need a reason"}'},
        ]
        first = ws.record_trace(messages, conversation_id="c-9")
        again = ws.record_trace(messages, conversation_id="c-9")
        self.assertEqual(first["calls"], 1)
        self.assertEqual(again, first)
        buckets = ws.tool_activity("refund_order", bucket="hour", span=1)["buckets"]
        self.assertEqual([(b["calls"], b["failures"]) for b in buckets], [(1, 1)])

    def test_review_apply_and_undo_a_revision(self) -> None:
        ws = live_client()
        seed_failures(ws)
        dry = ws.review(dry_run=True)
        self.assertTrue(dry["dry_run"])
        self.assertEqual(ws.revisions()["revisions"], [])

        review = ws.review()
        [revision] = review["revisions"]
        self.assertEqual((revision["tool"], revision["status"]), ("get_order", "proposed"))
        self.assertTrue(revision["notes_added"])
        self.assertIn("failed_call", {e["kind"] for e in revision["evidence"]})
        self.assertEqual(ws.revision(revision["revision_id"])["revision_id"], revision["revision_id"])
        preview = ws.preview("get_order", notes_added=revision["notes_added"])
        self.assertNotEqual(preview["before"], preview["after"])

        applied = ws.apply(revision["revision_id"], approved_by="ana")
        self.assertEqual((applied["status"], applied["approved_by"]), ("applied", "ana"))
        row = ws.tool("get_order")
        self.assertEqual(row["notes"], revision["notes_added"])
        self.assertIn(revision["notes_added"][0], row["model_view"]["function"]["description"])
        applied_now = ws.revisions(status="applied")["revisions"]
        # Beside it, the routing memory the review applied on its own (kind "memory").
        self.assertEqual([r["revision_id"] for r in applied_now if r.get("kind") != "memory"], [revision["revision_id"]])
        self.assertEqual(
            {r["approved_by"] for r in applied_now if r.get("kind") == "memory"} - {"whetstone:routing_memory"}, set()
        )

        undone = ws.undo("get_order", approved_by="ana")
        self.assertEqual((undone["status"], undone["undone_by"]), ("undone", "ana"))
        self.assertEqual(ws.tool("get_order")["notes"], [])
        # Registered, routing memory (when the review remembered a wording of get_order), the apply, the undo.
        remembered = sum(1 for r in applied_now if r.get("kind") == "memory" and r["tool"] == "get_order")
        versions = [v["version"] for v in ws.tool_versions("get_order")["versions"]]
        self.assertEqual(versions, list(range(3 + remembered, 0, -1)))

    def test_dismiss_a_revision_with_a_reason(self) -> None:
        ws = live_client()
        seed_failures(ws)
        [revision] = ws.review()["revisions"]
        dismissed = ws.dismiss(revision["revision_id"], approved_by="ana", reason="not now")
        self.assertEqual((dismissed["status"], dismissed["dismiss_reason"]), ("dismissed", "not now"))
        self.assertEqual(ws.tool("get_order")["notes"], [])

    def test_settings_quality_flags_unregistered_and_pins(self) -> None:
        ws = live_client()
        ws.register_tools(ORDER_TOOLS)
        self.assertEqual(ws.config()["top_k"], 5)
        self.assertEqual(ws.set_config({"top_k": 3})["top_k"], 3)
        self.assertEqual(ws.config()["top_k"], 3)

        route = ws.route("where is my order?")
        ws.record_calls([{"tool": "track_parcel", "arguments": {"code": "X1"}, "success": False, "error": "unknown code", "turn_id": route["turn_id"]}])
        [unregistered] = ws.unregistered()["tools"]
        self.assertEqual((unregistered["name"], unregistered["failure_count"]), ("track_parcel", 1))
        self.assertEqual(unregistered["draft"]["parameters"]["required"], ["code"])

        quality = ws.quality(days=1)
        self.assertEqual(len(quality["days"]), 1)
        self.assertEqual(quality["days"][0]["routed_turns"], 1)
        self.assertEqual(ws.flags(), {"flags": []})

        self.assertEqual([p["tool"] for p in ws.pin("get_order")["pins"]], ["get_order"])
        self.assertEqual([p["tool"] for p in ws.pins()["pins"]], ["get_order"])
        ws.unpin("get_order")
        self.assertEqual(ws.pins(), {"pins": []})
        self.assertEqual(ws.suggested_pins(days=1)["days"], 1)
        self.assertEqual(ws.tool_examples("get_order"), {"examples": []})
        ws.delete_tool("refund_order")
        self.assertEqual([t["name"] for t in ws.tools()["tools"]], ["get_order"])


class ErrorTest(unittest.TestCase):
    def test_401_for_a_token_the_deployment_does_not_know(self) -> None:
        url, _ = live()
        with self.assertRaises(AuthenticationError) as caught:
            Whetstone(url, "wsk_not_a_key", new_agent()).tools()
        err = caught.exception
        self.assertEqual((err.status, err.code), (401, "unauthorized"))
        self.assertEqual(len(err.request_id), 32)

    def test_404_for_an_unknown_agent_and_an_unknown_revision(self) -> None:
        with self.assertRaises(NotFoundError) as unknown_agent:
            live_client().tools()
        self.assertEqual((unknown_agent.exception.status, unknown_agent.exception.code), (404, "not_found"))
        ws = live_client()
        ws.register_tools(ORDER_TOOLS)
        with self.assertRaises(NotFoundError) as caught:
            ws.apply("rev_" + uuid.uuid4().hex, approved_by="ana")
        self.assertRegex(caught.exception.message, r"^revision rev_[0-9a-f]+ not found$")

    def test_400_names_the_field(self) -> None:
        ws = live_client()
        ws.register_tools(ORDER_TOOLS)
        with self.assertRaises(InvalidRequestError) as caught:
            ws.route("where is my order?", k=0)
        err = caught.exception
        self.assertEqual((err.status, err.code, err.fields), (400, "invalid_request", ["k"]))
        self.assertIn("[k: ", str(err))
        with self.assertRaises(InvalidRequestError) as bad_call:
            ws.record_calls([{"tool": "get_order", "success": "yes"}])  # type: ignore[typeddict-item]
        self.assertEqual(bad_call.exception.fields, ["calls.0.success"])

    def test_409_when_a_revision_is_applied_twice(self) -> None:
        ws = live_client()
        seed_failures(ws)
        [revision] = ws.review()["revisions"]
        ws.apply(revision["revision_id"], approved_by="ana")
        with self.assertRaises(ConflictError) as caught:
            ws.apply(revision["revision_id"], approved_by="bo")
        self.assertEqual((caught.exception.status, caught.exception.code), (409, "conflict"))
        self.assertIsInstance(caught.exception, WhetstoneError)
        self.assertEqual(ws.revision(revision["revision_id"])["approved_by"], "ana")


if __name__ == "__main__":
    unittest.main()
