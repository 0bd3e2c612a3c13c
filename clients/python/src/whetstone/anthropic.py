"""Whetstone's routed tools as the Anthropic SDK's `tools=`.

`route(request, format="anthropic")` already answers `model_tools` in the Messages API shape
(`{name, description, input_schema}`); `anthropic_tools` takes that route (or one in the OpenAI or MCP
shape) and returns the list `client.messages.create(tools=...)` takes, so the same code works
whatever format was asked for. `anthropic_calls` turns the model's `tool_use` blocks and the results
the agent got into the calls to report.
"""

from typing import Any, Dict, List, Mapping, Optional, Sequence

from .openai_loop import ERROR_CHARS, ID_CHARS, REQUEST_CHARS, _get
from .types import Call, RouteResult


def anthropic_tools(route: RouteResult) -> List[Dict[str, Any]]:
    """The route's `model_tools` as Anthropic tool definitions, best-ranked first."""
    return [_anthropic_tool(tool) for tool in route["model_tools"]]


def _anthropic_tool(tool: Mapping[str, Any]) -> Dict[str, Any]:
    if "input_schema" in tool:
        out = {"name": tool["name"], "description": tool["description"], "input_schema": tool["input_schema"]}
    elif "inputSchema" in tool:  # MCP
        out = {"name": tool["name"], "description": tool["description"], "input_schema": tool["inputSchema"]}
    else:  # OpenAI {type: "function", function: {...}}
        fn = tool["function"]
        out = {"name": fn["name"], "description": fn["description"], "input_schema": fn["parameters"]}
    # Kept for the Messages API's tool search, where a deferred tool loads only when searched.
    if tool.get("defer_loading") or (tool.get("_meta") or {}).get("defer_loading"):
        out["defer_loading"] = True
    return out


def anthropic_calls(
    content: Sequence[Any],
    results: Mapping[str, Any],
    *,
    route: RouteResult,
    request: str,
    conversation_id: Optional[str] = None,
) -> List[Call]:
    """The calls to report for an Anthropic reply's `tool_use` blocks.

    `content` is the reply's `content` (SDK blocks or dicts); `results` maps each `tool_use` id the
    agent ran to what the tool returned: an exception, or a dict with a non-null `error`, is a failed
    call. A block with no result never ran and is not reported. Ids are `<turn_id>:<tool_use id>`,
    so reporting the same reply twice counts each call once.
    """
    calls: List[Call] = []
    for block in content:
        if _get(block, "type") != "tool_use" or _get(block, "id") not in results:
            continue
        result = results[_get(block, "id")]
        error = _error_text(result)
        call: Call = {
            "id": ("%s:%s" % (route["turn_id"], _get(block, "id")))[:ID_CHARS],
            "tool": _get(block, "name"),
            "arguments": dict(_get(block, "input") or {}),
            "success": error is None,
            "request": request[:REQUEST_CHARS],
            "turn_id": route["turn_id"],
        }
        if error is not None:
            call["error"] = error
        if conversation_id is not None:
            call["conversation_id"] = conversation_id
        calls.append(call)
    return calls


def _error_text(result: Any) -> Optional[str]:
    if isinstance(result, BaseException):
        return (str(result) or type(result).__name__)[:ERROR_CHARS]
    if isinstance(result, Mapping) and result.get("error") not in (None, False):
        error = result["error"]
        return (error if isinstance(error, str) else repr(error))[:ERROR_CHARS]
    return None
