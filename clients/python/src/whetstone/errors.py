"""The API's errors as exceptions.

Every non-2xx answer of the API has the body `{"error": {"code", "message", "details"}}` (docs/api.md,
"Errors"); the client raises the subclass of `WhetstoneError` that matches its `code`, so a caller can
catch `NotFoundError` or `ConflictError` rather than compare strings.
"""

from typing import Any, Dict, List, Optional, Tuple, Type


class WhetstoneError(Exception):
    """A request the API refused, or that never got an answer.

    `status` is the HTTP status (None when no answer came back), `code` the API's error code
    (`invalid_request`, `not_found`, ...; `http_<status>` for an answer that is not the API's error
    shape, such as a proxy's page; `connection_refused` or `connection_error` when no answer came back), `details` the zod
    issues of a 400, and `request_id` the id to quote when asking about this request: Cloudflare's
    `cf-ray` of the answer when the edge sent one, else the `X-Request-Id` this client sent.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str,
        status: Optional[int],
        request_id: str,
        details: Optional[List[Any]] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.request_id = request_id
        self.details: List[Any] = list(details or [])
        self.retry_after = retry_after

    @property
    def fields(self) -> List[str]:
        """The fields a 400 names: each detail's `path` joined with dots (`calls.0.tool`)."""
        return [field for field, _ in self._issues()]

    def _issues(self) -> List[Tuple[str, str]]:
        out: List[Tuple[str, str]] = []
        for issue in self.details:
            path = issue.get("path") if isinstance(issue, dict) else None
            if isinstance(issue, dict) and isinstance(path, list) and path:
                out.append((".".join(str(p) for p in path), str(issue.get("message", ""))))
        return out

    def __str__(self) -> str:
        status = "no answer" if self.status is None else str(self.status)
        text = "%s %s: %s" % (status, self.code, self.message)
        issues = ["%s: %s" % issue for issue in self._issues()]
        if issues:
            text += " [" + "; ".join(issues[:3]) + ("; ..." if len(issues) > 3 else "") + "]"
        return text + " (request %s)" % self.request_id


class InvalidRequestError(WhetstoneError):
    """400 `invalid_request`: the body or a parameter failed validation; `details` names the field."""


class AuthenticationError(WhetstoneError):
    """401 `unauthorized`: no token, or one the deployment does not know."""


class PermissionDeniedError(WhetstoneError):
    """403 `forbidden`: the key's role may not do this (an agent key applying a revision, ...)."""


class NotFoundError(WhetstoneError):
    """404 `not_found`: an unknown agent, tool or revision (also another agent's)."""


class MethodNotAllowedError(WhetstoneError):
    """405 `method_not_allowed`."""


class ConflictError(WhetstoneError):
    """409 `conflict`: a revision that is no longer proposed, a row that moved, a review running."""


class PayloadTooLargeError(WhetstoneError):
    """413 `payload_too_large`: a body over the limit of docs/api.md "Limits"."""


class RateLimitedError(WhetstoneError):
    """429 `rate_limited`, once the client's retries are spent; `retry_after` is the wait asked for."""


class UpstreamError(WhetstoneError):
    """502 `upstream_error`: the model or embedder the deployment calls failed."""


class ServiceUnavailableError(WhetstoneError):
    """503: the platform could not serve the request (retried when that is safe)."""


class ServerError(WhetstoneError):
    """Any other 5xx (`internal`)."""


class WhetstoneConnectionError(WhetstoneError):
    """No answer: the connection failed or timed out (`status` is None)."""


_BY_CODE: Dict[str, Type[WhetstoneError]] = {
    "invalid_request": InvalidRequestError,
    "unauthorized": AuthenticationError,
    "forbidden": PermissionDeniedError,
    "not_found": NotFoundError,
    "method_not_allowed": MethodNotAllowedError,
    "conflict": ConflictError,
    "payload_too_large": PayloadTooLargeError,
    "rate_limited": RateLimitedError,
    "upstream_error": UpstreamError,
}

_BY_STATUS: Dict[int, Type[WhetstoneError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    409: ConflictError,
    413: PayloadTooLargeError,
    429: RateLimitedError,
    502: UpstreamError,
    503: ServiceUnavailableError,
}


def error_class(code: str, status: int) -> Type[WhetstoneError]:
    """The subclass for an answer: by the API's code, else by the status."""
    if code in _BY_CODE:
        return _BY_CODE[code]
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ServerError if status >= 500 else WhetstoneError
