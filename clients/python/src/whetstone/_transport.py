"""One HTTP exchange with retries, on `urllib.request` (no third-party dependency).

When a retry is safe (docs/api.md): a 429 is refused by the rate limiter before any handler runs
("a rejected request writes nothing"), so every call may be sent again after its `Retry-After`. A 503
or a lost connection may come after the server acted, so only idempotent calls are sent again then:
reads, PUTs, calls and traces (deduplicated by call id), outcomes (one per turn), previews and dry-run
reviews. A route (which logs a turn), a review, an apply, a dismiss or an undo is never sent twice
once it may have reached the server; the error is raised for the caller to decide.
"""

import email.utils
import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Callable, Dict, Mapping, Optional

from .errors import WhetstoneConnectionError, WhetstoneError, error_class

USER_AGENT = "whetstone-python/0.1.0"
#: The most the client waits between two attempts, whatever Retry-After asks.
MAX_WAIT = 60.0

Query = Mapping[str, Any]


class Transport:
    """Sends requests to one deployment with one token."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float,
        retries: int,
        backoff: float,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if retries < 0:
            raise ValueError("retries must be 0 or more")
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.sleep = sleep

    def send(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        query: Optional[Query] = None,
        idempotent: bool,
    ) -> Any:
        """The decoded JSON answer (None for 204); raises a `WhetstoneError` subclass otherwise."""
        url = self.base_url + path + _query_string(query or {})
        request_id = uuid.uuid4().hex
        data = None if body is None else json.dumps(body).encode("utf-8")
        attempt = 0
        while True:
            try:
                return self._once(method, url, data, request_id)
            except WhetstoneError as err:
                wait = self._retry_wait(err, attempt, idempotent)
                if wait is None:
                    raise
            attempt += 1
            self.sleep(wait)

    def _retry_wait(self, err: WhetstoneError, attempt: int, idempotent: bool) -> Optional[float]:
        if attempt >= self.retries:
            return None
        # A refused connection never reached the server, so any call may go again.
        never_sent = err.code == "connection_refused"
        if err.status == 429 or never_sent or (idempotent and (err.status == 503 or err.status is None)):
            if err.retry_after is not None:
                return min(err.retry_after, MAX_WAIT)
            # Exponential backoff with "equal jitter": half fixed, half random.
            step = min(self.backoff * (2**attempt), MAX_WAIT)
            return step / 2 + random.uniform(0, step / 2)
        return None

    def _once(self, method: str, url: str, data: Optional[bytes], request_id: str) -> Any:
        headers = {
            "Authorization": "Bearer " + self.token,
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
            "X-Request-Id": request_id,
        }
        if data is not None:
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as res:
                text = res.read().decode("utf-8")
                return json.loads(text) if text else None
        except urllib.error.HTTPError as res:
            text = res.read().decode("utf-8", errors="replace")
            raise _api_error(res.code, text, res.headers, request_id) from None
        except (urllib.error.URLError, socket.timeout, ConnectionError) as err:
            reason = getattr(err, "reason", err)
            refused = isinstance(reason, ConnectionRefusedError)
            raise WhetstoneConnectionError(
                "no answer from %s: %s" % (url, reason),
                code="connection_refused" if refused else "connection_error",
                status=None,
                request_id=request_id,
            ) from err


def _api_error(status: int, text: str, headers: Mapping[str, str], sent_id: str) -> WhetstoneError:
    """The docs/api.md error body when the answer has one; else the status and the first of the text."""
    code, message, details = "http_%d" % status, text[:200] or "HTTP %d" % status, []
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    error = parsed.get("error") if isinstance(parsed, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), str) and isinstance(error.get("message"), str):
        code, message = error["code"], error["message"]
        details = error["details"] if isinstance(error.get("details"), list) else []
    request_id = headers.get("cf-ray") or headers.get("x-request-id") or sent_id
    cls = error_class(code, status)
    return cls(
        message,
        code=code,
        status=status,
        request_id=request_id,
        details=details,
        retry_after=_retry_after(headers.get("retry-after")),
    )


def _retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds from `Retry-After`: a number of seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _query_string(query: Query) -> str:
    pairs: Dict[str, str] = {}
    for key, value in query.items():
        if value is None:
            continue
        pairs[key] = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return "?" + urllib.parse.urlencode(pairs) if pairs else ""


def quote(segment: str) -> str:
    """A path segment, every reserved character escaped (a tool named `a/b` is `a%2Fb`)."""
    return urllib.parse.quote(segment, safe="")


