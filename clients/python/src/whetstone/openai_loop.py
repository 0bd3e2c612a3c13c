"""`with_whetstone`: an OpenAI chat-completions tool loop that routes every turn through Whetstone and
reports every tool call it runs (docs/api.md `/route`, `/calls`).

The OpenAI client is duck-typed: any object with `chat.completions.create(**kwargs)` answering an
object (or dict) with `choices[0].message` fits, so `openai.OpenAI()` does and so does any
OpenAI-compatible client; this package never imports `openai`.
"""

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Protocol

from .types import Call, Message, RecordCallsAnswer, RouteResult

#: docs/api.md limits the loop keeps to rather than have a report refused.
REQUEST_CHARS = 4000
ERROR_CHARS = 4000
ID_CHARS = 128

#: Runs one tool with the model's arguments as keyword arguments. A raise, or a dict result with a
#: non-null `error`, is a failed call (docs/learning.md evidence); anything else is a success.
ToolHandler = Callable[..., Any]


class LoopWhetstone(Protocol):
    """The two methods of `Whetstone` the loop uses."""

    def route(self, request: str, *, conversation_id: Optional[str] = None, k: Optional[int] = None) -> RouteResult:
        ...

    def record_calls(self, calls: List[Call]) -> RecordCallsAnswer:
        ...


@dataclass
class ExecutedCall:
    """One tool call the loop ran, as it was reported."""

    id: str
    tool: str
    arguments: Dict[str, Any]
    success: bool
    error: Optional[str]
    result: Any


@dataclass
class LoopRun:
    """What one turn did. `messages` is the history to pass to the next turn of the conversation."""

    turn_id: str
    route: RouteResult
    reply: Optional[str]
    messages: List[Message]
    calls: List[ExecutedCall] = field(default_factory=list)
    recorded: Optional[RecordCallsAnswer] = None


class WhetstoneLoop:
    """Serves user requests: route, model, tools, model … until the model answers in text."""

    def __init__(
        self,
        openai: Any,
        whetstone: LoopWhetstone,
        *,
        model: str,
        handlers: Mapping[str, ToolHandler],
        k: Optional[int] = None,
        max_steps: int = 8,
        params: Optional[Mapping[str, Any]] = None,
    ) -> None:
        self.openai = openai
        self.whetstone = whetstone
        self.model = model
        self.handlers = dict(handlers)
        self.k = k
        self.max_steps = max_steps
        self.params = dict(params or {})

    def run(
        self,
        request: str,
        *,
        conversation_id: Optional[str] = None,
        messages: Optional[List[Message]] = None,
    ) -> LoopRun:
        """Serves one request. Calls already run are reported even when a later model call raises."""
        route = self.whetstone.route(request[:REQUEST_CHARS], conversation_id=conversation_id, k=self.k)
        history: List[Message] = list(messages or []) + [{"role": "user", "content": request}]
        run = LoopRun(turn_id=route["turn_id"], route=route, reply=None, messages=history)
        try:
            run.reply = self._converse(run)
        finally:
            if run.calls:
                reports = [_to_call(c, request, run.turn_id, conversation_id) for c in run.calls]
                run.recorded = self.whetstone.record_calls(reports)
        return run

    def _converse(self, run: LoopRun) -> Optional[str]:
        for _ in range(self.max_steps):
            kwargs: Dict[str, Any] = dict(self.params)
            kwargs["model"] = self.model
            kwargs["messages"] = run.messages
            if run.route["model_tools"]:
                kwargs["tools"] = run.route["model_tools"]
            choices = _get(self.openai.chat.completions.create(**kwargs), "choices") or []
            message = _get(choices[0], "message") if choices else None
            if message is None:
                return None
            tool_calls = _get(message, "tool_calls") or []
            run.messages.append(_assistant_message(message, tool_calls))
            if not tool_calls:
                content = _get(message, "content")
                return content if isinstance(content, str) else None
            for tool_call in tool_calls:
                executed, content = self._execute(tool_call, run.turn_id)
                if executed is not None:
                    run.calls.append(executed)
                run.messages.append({"role": "tool", "tool_call_id": _get(tool_call, "id"), "content": content})
        return None

    def _execute(self, tool_call: Any, turn_id: str) -> "tuple[Optional[ExecutedCall], str]":
        """Runs one tool call; one with no handler is answered to the model but not reported (it never ran)."""
        function = _get(tool_call, "function")
        name = _get(function, "name") or ""
        handler = self.handlers.get(name)
        if function is None or handler is None:
            return None, json.dumps({"error": "no tool named %s" % (name or _get(tool_call, "type"))})
        call_id = ("%s:%s" % (turn_id, _get(tool_call, "id")))[:ID_CHARS]
        args = _parse_arguments(_get(function, "arguments"))
        if args is None:
            return _failed(call_id, name, {}, "the arguments are not a JSON object")
        try:
            result = handler(**args)
        except Exception as err:  # noqa: BLE001 - any failure of the tool is the call's error
            return _failed(call_id, name, args, str(err) or type(err).__name__)
        error = _error_of(result)
        content = json.dumps(result, default=str)
        return ExecutedCall(call_id, name, args, error is None, error, result), content


def with_whetstone(
    openai: Any,
    whetstone: LoopWhetstone,
    *,
    model: str,
    handlers: Mapping[str, ToolHandler],
    k: Optional[int] = None,
    max_steps: int = 8,
    params: Optional[Mapping[str, Any]] = None,
) -> WhetstoneLoop:
    """Wraps an OpenAI-style client so each turn is routed and each tool call it runs is reported.

    `handlers` maps tool names to functions called with the model's arguments as keyword arguments;
    `k` is the number of tools to offer (default: the agent's `top_k`); `max_steps` the model calls
    per turn before the loop stops; `params` extra `create` arguments (temperature, ...).
    """
    return WhetstoneLoop(
        openai, whetstone, model=model, handlers=handlers, k=k, max_steps=max_steps, params=params
    )


def _get(obj: Any, name: str) -> Any:
    """An attribute of an SDK object, or a key of a dict (OpenAI-compatible clients answer either)."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _assistant_message(message: Any, tool_calls: List[Any]) -> Message:
    """The assistant's message as a plain dict, the shape `create(messages=...)` takes back."""
    out: Message = {"role": "assistant", "content": _get(message, "content")}
    if tool_calls:
        out["tool_calls"] = [
            {
                "id": _get(tc, "id"),
                "type": _get(tc, "type") or "function",
                "function": {
                    "name": _get(_get(tc, "function"), "name"),
                    "arguments": _get(_get(tc, "function"), "arguments"),
                },
            }
            for tc in tool_calls
        ]
    return out


def _parse_arguments(text: Any) -> Optional[Dict[str, Any]]:
    if isinstance(text, Mapping):
        return dict(text)
    try:
        parsed = json.loads(text or "{}")
    except (TypeError, ValueError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _error_of(result: Any) -> Optional[str]:
    """A result `{"error": ...}` with an error that is not None or False is a failure."""
    if not isinstance(result, Mapping) or "error" not in result:
        return None
    error = result["error"]
    if error is None or error is False:
        return None
    return (error if isinstance(error, str) else json.dumps(error, default=str))[:ERROR_CHARS]


def _failed(call_id: str, tool: str, args: Dict[str, Any], error: str) -> "tuple[ExecutedCall, str]":
    clipped = error[:ERROR_CHARS]
    return ExecutedCall(call_id, tool, args, False, clipped, None), json.dumps({"error": clipped})


def _to_call(c: ExecutedCall, request: str, turn_id: str, conversation_id: Optional[str]) -> Call:
    call: Call = {
        "id": c.id,
        "tool": c.tool,
        "arguments": c.arguments,
        "success": c.success,
        "request": request[:REQUEST_CHARS],
        "turn_id": turn_id,
    }
    if c.error is not None:
        call["error"] = c.error
    if conversation_id is not None:
        call["conversation_id"] = conversation_id
    return call
