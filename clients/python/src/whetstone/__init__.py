"""Whetstone's Python client: route tools, report calls, review and apply revisions.

    from whetstone import Whetstone
    ws = Whetstone("http://localhost:8787", token, "demo")
    route = ws.route("will it rain in Lisbon?")
    ws.record_calls([{"tool": "get_weather", "arguments": {"city": "Lisbon"}, "success": True,
                      "turn_id": route["turn_id"]}])

Standard library only; see docs/api.md of the repository for every route.
"""

from .anthropic import anthropic_calls, anthropic_tools
from .client import Whetstone
from .errors import (
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    MethodNotAllowedError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitedError,
    ServerError,
    ServiceUnavailableError,
    UpstreamError,
    WhetstoneConnectionError,
    WhetstoneError,
)
from .openai_loop import ExecutedCall, LoopRun, WhetstoneLoop, with_whetstone

__version__ = "0.1.0"

__all__ = [
    "AuthenticationError",
    "ConflictError",
    "ExecutedCall",
    "InvalidRequestError",
    "LoopRun",
    "MethodNotAllowedError",
    "NotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "RateLimitedError",
    "ServerError",
    "ServiceUnavailableError",
    "UpstreamError",
    "Whetstone",
    "WhetstoneConnectionError",
    "WhetstoneError",
    "WhetstoneLoop",
    "anthropic_calls",
    "anthropic_tools",
    "with_whetstone",
]
