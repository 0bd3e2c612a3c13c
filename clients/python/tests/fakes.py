"""Stand-ins that behave like the OpenAI and Anthropic Python SDKs where the helpers touch them:
keyword-only `create(...)`, answers as objects with attributes (the SDKs' pydantic models), and the
checks the real APIs make on what they are sent (a tool message must answer a tool call of the
message before it; a tool needs a name, a description and a JSON-Schema object)."""

import json
import re
from types import SimpleNamespace
from typing import Any, Dict, List

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class BadRequestError(Exception):
    """What the SDKs raise on a 400 of the API."""


def tool_call(call_id: str, name: str, arguments: str) -> SimpleNamespace:
    return SimpleNamespace(id=call_id, type="function", function=SimpleNamespace(name=name, arguments=arguments))


def completion(content: Any = None, tool_calls: Any = None) -> SimpleNamespace:
    message = SimpleNamespace(role="assistant", content=content, tool_calls=tool_calls, refusal=None)
    return SimpleNamespace(id="chatcmpl-1", choices=[SimpleNamespace(index=0, message=message, finish_reason="stop")])


class FakeOpenAI:
    """`client.chat.completions.create(model=..., messages=..., tools=...)` answering scripted completions."""

    def __init__(self, script: List[SimpleNamespace]) -> None:
        self.script = list(script)
        self.requests: List[Dict[str, Any]] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, *, model: str, messages: List[Dict[str, Any]], **kwargs: Any) -> SimpleNamespace:
        self._check(messages, kwargs.get("tools"))
        self.requests.append({"model": model, "messages": json.loads(json.dumps(messages)), **kwargs})
        if not self.script:
            raise BadRequestError("the script has no more completions")
        return self.script.pop(0)

    @staticmethod
    def _check(messages: List[Dict[str, Any]], tools: Any) -> None:
        for tool in tools or []:
            fn = tool.get("function", {})
            if tool.get("type") != "function" or not NAME.match(fn.get("name", "")):
                raise BadRequestError("tools: invalid function tool %r" % (tool,))
            if fn.get("parameters", {}).get("type") != "object":
                raise BadRequestError("tools: parameters must be a JSON-Schema object")
        open_calls: List[str] = []
        for message in messages:
            if not isinstance(message, dict) or message.get("role") not in ("system", "user", "assistant", "tool"):
                raise BadRequestError("messages: invalid message %r" % (message,))
            if message["role"] == "tool":
                if message.get("tool_call_id") not in open_calls:
                    raise BadRequestError("messages with role 'tool' must answer a preceding tool_calls id")
                if not isinstance(message.get("content"), str):
                    raise BadRequestError("tool content must be a string")
                open_calls.remove(message["tool_call_id"])
            elif open_calls:
                raise BadRequestError("tool_calls %s have no tool message" % open_calls)
            if message["role"] == "assistant":
                open_calls = [tc["id"] for tc in message.get("tool_calls") or []]


def tool_use(block_id: str, name: str, input: Dict[str, Any]) -> SimpleNamespace:
    return SimpleNamespace(type="tool_use", id=block_id, name=name, input=input)


class FakeAnthropic:
    """`client.messages.create(model=..., max_tokens=..., messages=..., tools=...)` as the Messages API checks it."""

    TOOL_KEYS = {"name", "description", "input_schema", "defer_loading", "cache_control", "type"}

    def __init__(self, content: List[SimpleNamespace]) -> None:
        self.content = content
        self.requests: List[Dict[str, Any]] = []
        self.messages = SimpleNamespace(create=self._create)

    def _create(self, *, model: str, max_tokens: int, messages: List[Dict[str, Any]], **kwargs: Any) -> SimpleNamespace:
        for tool in kwargs.get("tools") or []:
            extra = set(tool) - self.TOOL_KEYS
            if extra:
                raise BadRequestError("tools: Extra inputs are not permitted: %s" % sorted(extra))
            if not NAME.match(tool.get("name", "")) or tool.get("input_schema", {}).get("type") != "object":
                raise BadRequestError("tools: a tool needs a name and an input_schema of type object")
        self.requests.append({"model": model, "max_tokens": max_tokens, "messages": messages, **kwargs})
        return SimpleNamespace(role="assistant", content=self.content, stop_reason="tool_use")
