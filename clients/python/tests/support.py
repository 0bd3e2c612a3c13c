"""Shared by the tests: the package from src/, the live Worker's address, a fake HTTP server.

`npm test` starts the real Worker (test/node/python-client.test.ts) and runs
`python3 -m unittest discover -s tests` here with WHETSTONE_TEST_URL and WHETSTONE_TEST_TOKEN (the
admin token) set. Run by hand against `npm start`: set both, then the same command.
"""

import http.server
import json
import os
import sys
import threading
import uuid
from typing import Any, Callable, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from whetstone import Whetstone  # noqa: E402


def live() -> Tuple[str, str]:
    """The Worker the tests run against; without one the live tests fail, they are never skipped."""
    url = os.environ.get("WHETSTONE_TEST_URL")
    token = os.environ.get("WHETSTONE_TEST_TOKEN")
    if not url or not token:
        raise RuntimeError(
            "set WHETSTONE_TEST_URL and WHETSTONE_TEST_TOKEN (a running Worker and its ADMIN_TOKEN), "
            "or run the tests through npm test"
        )
    return url, token


def new_agent(prefix: str = "py") -> str:
    return "%s-%s" % (prefix, uuid.uuid4().hex[:12])


def live_client(agent: Optional[str] = None, **options: Any) -> Whetstone:
    url, token = live()
    return Whetstone(url, token, agent or new_agent(), **options)


#: A request the fake server saw: method, path with query, headers, decoded JSON body.
Seen = Dict[str, Any]
#: What the fake server answers: status, headers, body (a dict is sent as JSON, a str as it is).
Answer = Tuple[int, Dict[str, str], Any]


class FakeServer:
    """An HTTP server in a thread that answers from a script and records what it was sent."""

    def __init__(self, answer: Callable[[Seen, int], Answer]) -> None:
        self.seen: List[Seen] = []
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                seen = {
                    "method": self.command,
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": json.loads(raw) if raw else None,
                }
                fake.seen.append(seen)
                status, headers, body = answer(seen, len(fake.seen))
                data = (json.dumps(body) if not isinstance(body, str) else body).encode("utf-8")
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = _serve

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> "FakeServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def error_body(code: str, message: str) -> Dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": []}}
