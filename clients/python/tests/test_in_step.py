"""The client kept in step with the API: the OpenAPI document the Worker serves is compared with the
client's methods and types. A new operation fails here until it is given a method or listed as not
for this client; a field added to (or dropped from) an answer or a body fails until `whetstone.types`
says it."""

import collections.abc
import inspect
import json
import re
import typing
import unittest
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

from support import FakeServer, live

from whetstone import Whetstone, types

#: operationId → the client method, and arguments to call it with.
CLIENT_OPERATIONS: Dict[str, Tuple[str, Tuple[Any, ...], Dict[str, Any]]] = {
    "putTools": ("register_tools", ([],), {}),
    "listTools": ("tools", (), {}),
    "getTool": ("tool", ("t",), {}),
    "deleteTool": ("delete_tool", ("t",), {}),
    "listToolVersions": ("tool_versions", ("t",), {}),
    "listToolExamples": ("tool_examples", ("t",), {}),
    "getToolActivity": ("tool_activity", ("t",), {}),
    "previewTool": ("preview", ("t",), {}),
    "listPins": ("pins", (), {}),
    "putToolPin": ("pin", ("t",), {}),
    "deleteToolPin": ("unpin", ("t",), {}),
    "listPinsSuggested": ("suggested_pins", (), {}),
    "route": ("route", ("r",), {}),
    "reportCalls": ("record_calls", ([],), {}),
    "reportTrace": ("record_trace", ([],), {}),
    "reportOutcomes": ("outcome", ("turn", True), {}),
    "createReview": ("review", (), {}),
    "listRevisions": ("revisions", (), {}),
    "getRevision": ("revision", ("rev",), {}),
    "applyRevision": ("apply", ("rev",), {"approved_by": "a"}),
    "createRevisionsBulk": ("decide_many", ("apply", ["rev"]), {"approved_by": "a"}),
    "dismissRevision": ("dismiss", ("rev",), {"approved_by": "a"}),
    "undoTool": ("undo", ("t",), {"approved_by": "a"}),
    "listFlags": ("flags", (), {}),
    "getQuality": ("quality", (), {}),
    "listUnregistered": ("unregistered", (), {}),
    "getWhoami": ("whoami", (), {}),
    "getConfig": ("config", (), {}),
    "putConfig": ("set_config", ({},), {}),
}

#: Operations an agent or an approver does not use, and why.
NOT_IN_CLIENT = {
    "listAgents": "admin: the deployment's agents",
    "deleteAgent": "admin",
    "createKey": "admin: keys are made by the deployer",
    "deleteKey": "admin",
    "getExport": "admin: NDJSON export",
    "import": "admin: NDJSON import",
    "mcp": "MCP clients speak JSON-RPC to it",
    "listUpstreams": "MCP gateway setup: done once by whoever deploys, with curl or the API",
    "getUpstream": "MCP gateway setup",
    "putUpstream": "MCP gateway setup",
    "deleteUpstream": "MCP gateway setup",
    "createUpstreamSync": "MCP gateway setup (the cron re-syncs)",
    "releaseUpstreamTool": (
        "MCP gateway safety: a person's decision on a quarantined upstream tool, made after reading "
        "the held text (GET upstream), with curl or the API; an agent never releases what was held from it"
    ),
    "listWebhooks": "notification setup: done once by an operator, with curl or the API",
    "putWebhooks": "notification setup",
    "tryRevision": (
        "an approver's look before a decision, read as a table in the dashboard's inbox (or with curl); "
        "a script that decides uses apply, dismiss or decide_many"
    ),
    "putToolTestEndpoint": "try setup: done once by an operator, with curl or the API",
    "getToolTestEndpoint": "try setup",
    "deleteToolTestEndpoint": "try setup",
}

#: Path parameters: `agent` is the client's; the others are the methods' first argument.
PATH_PARAMETERS = {"agent": None, "tool": "tool", "id": "revision_id"}

#: Where a method's body is one argument typed by a TypedDict rather than keyword arguments.
BODY_ARGUMENT = {"putConfig": "patch"}

#: Answers typed loosely on purpose: listTools answers rows or model views (see `model_tools`).
LOOSE = {("listTools", "tools")}


def fetch_document() -> Dict[str, Any]:
    url, _ = live()
    with urllib.request.urlopen(url + "/openapi.json", timeout=30) as res:
        return json.loads(res.read())  # type: ignore[no-any-return]


def operations(doc: Dict[str, Any]) -> Dict[str, Tuple[str, str, Dict[str, Any]]]:
    out = {}
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            if method in ("get", "put", "post", "delete", "patch"):
                out[op["operationId"]] = (method.upper(), path, op)
    return out


def resolve(doc: Dict[str, Any], schema: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    while schema and "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].split("/")[-1]]
    return schema or {}


def unwrap(annotation: Any) -> Any:
    """`Optional[X]` → X."""
    if typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def is_typeddict(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, dict) and hasattr(annotation, "__total__")


def compare(doc: Dict[str, Any], schema: Any, annotation: Any, where: str) -> List[str]:
    """The fields the schema and the annotation disagree on, recursively."""
    schema = resolve(doc, schema)
    annotation = unwrap(annotation)
    if "allOf" in schema:
        merged: Dict[str, Any] = {"properties": {}}
        for part in schema["allOf"]:
            merged["properties"].update(resolve(doc, part).get("properties", {}))
        schema = merged
    if is_typeddict(annotation):
        hints = typing.get_type_hints(annotation)
        api = set(schema.get("properties", {}))
        problems = ["%s.%s: the API has it, the client does not" % (where, f) for f in sorted(api - set(hints))]
        problems += ["%s.%s: the client has it, the API does not" % (where, f) for f in sorted(set(hints) - api)]
        for name in sorted(api & set(hints)):
            problems += compare(doc, schema["properties"][name], hints[name], "%s.%s" % (where, name))
        return problems
    if typing.get_origin(annotation) in (list, List) and schema.get("items"):
        return compare(doc, schema["items"], typing.get_args(annotation)[0], where + "[]")
    return []


def success_schema(op: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    for status, answer in sorted(op["responses"].items()):
        if status.startswith("2") and status != "204":
            return answer.get("content", {}).get("application/json", {}).get("schema")  # type: ignore[no-any-return]
    return None


class InStepTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.doc = fetch_document()
        cls.ops = operations(cls.doc)

    def test_every_operation_is_in_the_client_or_listed_as_not_for_it(self) -> None:
        undecided = sorted(set(self.ops) - set(CLIENT_OPERATIONS) - set(NOT_IN_CLIENT))
        self.assertEqual(undecided, [], "operations with no method in the Python client")
        gone = sorted((set(CLIENT_OPERATIONS) | set(NOT_IN_CLIENT)) - set(self.ops))
        self.assertEqual(gone, [], "operations the API no longer has")
        for op_id, (name, _, _) in CLIENT_OPERATIONS.items():
            self.assertTrue(callable(getattr(Whetstone, name, None)), "%s: Whetstone.%s" % (op_id, name))

    def test_each_method_sends_its_operations_method_and_path(self) -> None:
        with FakeServer(lambda seen, n: (200, {}, {})) as fake:
            ws = Whetstone(fake.url, "tok", "demo", retries=0)
            for op_id, (name, args, kwargs) in CLIENT_OPERATIONS.items():
                getattr(ws, name)(*args, **kwargs)
        for (op_id, _), seen in zip(CLIENT_OPERATIONS.items(), fake.seen):
            method, path, _ = self.ops[op_id]
            pattern = "^" + re.sub(r"\{[a-z_]+\}", "[^/?]+", path) + r"(\?.*)?$"
            self.assertEqual(seen["method"], method, op_id)
            self.assertRegex(seen["path"], pattern, op_id)

    def test_each_parameter_of_an_operation_is_a_parameter_of_its_method(self) -> None:
        for op_id, (name, _, _) in CLIENT_OPERATIONS.items():
            for p in self.ops[op_id][2].get("parameters", []):
                wanted = PATH_PARAMETERS.get(p["name"], p["name"]) if p["in"] == "path" else p["name"]
                if wanted is None:
                    continue
                # `format`/`defer` of listTools are the model_tools method's.
                owner = "model_tools" if op_id == "listTools" else name
                self.assertIn(wanted, inspect.signature(getattr(Whetstone, owner)).parameters, "%s: %s" % (op_id, p["name"]))

    def test_every_body_field_is_known_to_the_client(self) -> None:
        for op_id, (name, _, _) in CLIENT_OPERATIONS.items():
            body = self.ops[op_id][2].get("requestBody")
            if not body:
                continue
            schema = resolve(self.doc, body["content"]["application/json"]["schema"])
            hints = typing.get_type_hints(getattr(Whetstone, name))
            if op_id in BODY_ARGUMENT:
                self.assertEqual(compare(self.doc, schema, hints[BODY_ARGUMENT[op_id]], op_id), [])
                continue
            params = inspect.signature(getattr(Whetstone, name)).parameters
            for field, field_schema in schema.get("properties", {}).items():
                self.assertIn(field, params, "%s: body field %s has no argument" % (op_id, field))
                annotation = unwrap(hints[field])
                if typing.get_origin(annotation) is collections.abc.Sequence:
                    annotation = List[typing.get_args(annotation)[0]]  # type: ignore[misc]
                self.assertEqual(compare(self.doc, field_schema, annotation, "%s.%s" % (op_id, field)), [])

    def test_every_answer_field_is_known_to_the_client(self) -> None:
        for op_id, (name, _, _) in CLIENT_OPERATIONS.items():
            answer = typing.get_type_hints(getattr(Whetstone, name))["return"]
            schema = success_schema(self.ops[op_id][2])
            if answer is type(None):
                self.assertEqual(resolve(self.doc, schema).get("properties", {}), {}, op_id)
                continue
            problems = compare(self.doc, schema, answer, op_id)
            problems = [p for p in problems if not any(p.startswith("%s.%s" % loose) for loose in LOOSE)]
            self.assertEqual(problems, [], op_id)

    def test_the_comparison_catches_a_field_the_client_does_not_know(self) -> None:
        schema = {"type": "object", "properties": {"turn_id": {}, "routed": {}, "tools": {"type": "array", "items": {"type": "object", "properties": {"name": {}, "rank": {}, "score": {}, "why": {}}}}, "model_tools": {}}}
        self.assertEqual(compare(self.doc, schema, types.RouteResult, "route"), ["route.tools[].why: the API has it, the client does not"])


if __name__ == "__main__":
    unittest.main()
