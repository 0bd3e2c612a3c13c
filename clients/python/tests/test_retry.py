"""Retries and error mapping against a fake server (http.server in a thread): what the Worker's
platform does on a bad day (503s, 429 with Retry-After, a proxy's HTML page) cannot be made to
happen on the real local Worker on demand."""

import socket
import time
import unittest

from support import FakeServer, error_body

from whetstone import (
    ConflictError,
    RateLimitedError,
    ServerError,
    ServiceUnavailableError,
    Whetstone,
    WhetstoneConnectionError,
)

SETTINGS = {"top_k": 5}
ROUTE = {"turn_id": "t-1", "routed": True, "tools": [], "model_tools": []}


def unavailable(times: int, then: object):
    """503 for the first `times` requests, then 200 with `then`."""
    return lambda seen, n: (503, {}, "<h1>503 Service Unavailable</h1>") if n <= times else (200, {}, then)


class RetryTest(unittest.TestCase):
    def test_a_read_is_sent_again_after_503s_with_backoff_and_succeeds(self) -> None:
        with FakeServer(unavailable(2, SETTINGS)) as fake:
            ws = Whetstone(fake.url, "tok", "demo", retries=2, backoff=0.05)
            started = time.monotonic()
            self.assertEqual(ws.config(), SETTINGS)
            elapsed = time.monotonic() - started
        self.assertEqual([s["path"] for s in fake.seen], ["/v1/agents/demo/config"] * 3)
        # Equal jitter: at least half of each step, 0.05 then 0.1 s.
        self.assertGreaterEqual(elapsed, 0.025 + 0.05)
        # The same request id on every attempt, so a server's logs can join them.
        self.assertEqual(len({s["headers"]["x-request-id"] for s in fake.seen}), 1)

    def test_the_last_503_is_raised_once_retries_are_spent(self) -> None:
        with FakeServer(unavailable(10, SETTINGS)) as fake:
            ws = Whetstone(fake.url, "tok", "demo", retries=2, backoff=0.01)
            with self.assertRaises(ServiceUnavailableError) as caught:
                ws.config()
        self.assertEqual(len(fake.seen), 3)
        err = caught.exception
        self.assertEqual((err.status, err.code), (503, "http_503"))
        self.assertEqual(err.message, "<h1>503 Service Unavailable</h1>")
        self.assertEqual(err.request_id, fake.seen[0]["headers"]["x-request-id"])

    def test_a_route_that_reached_the_server_is_never_sent_again(self) -> None:
        with FakeServer(unavailable(1, ROUTE)) as fake:
            ws = Whetstone(fake.url, "tok", "demo", retries=3, backoff=0.01)
            with self.assertRaises(ServiceUnavailableError):
                ws.route("will it rain in Lisbon?")
        self.assertEqual(len(fake.seen), 1)

    def test_apply_dismiss_undo_and_a_stored_review_are_not_sent_again_after_a_503(self) -> None:
        with FakeServer(unavailable(100, {})) as fake:
            ws = Whetstone(fake.url, "tok", "demo", retries=3, backoff=0.01)
            for call in (
                lambda: ws.apply("rev_1", approved_by="ana"),
                lambda: ws.dismiss("rev_1", approved_by="ana"),
                lambda: ws.undo("get_weather", approved_by="ana"),
                lambda: ws.review(),
            ):
                with self.assertRaises(ServiceUnavailableError):
                    call()
        self.assertEqual(len(fake.seen), 4)

    def test_a_reported_call_is_sent_again_with_the_same_id_so_it_counts_once(self) -> None:
        with FakeServer(unavailable(1, {"accepted": 1, "duplicates": 0})) as fake:
            ws = Whetstone(fake.url, "tok", "demo", retries=2, backoff=0.01)
            answer = ws.record_calls([{"tool": "get_weather", "success": True}])
        self.assertEqual(answer, {"accepted": 1, "duplicates": 0})
        ids = [s["body"]["calls"][0]["id"] for s in fake.seen]
        self.assertEqual(len(ids), 2)
        self.assertEqual(ids[0], ids[1])
        self.assertTrue(ids[0].startswith("py-"))

    def test_a_dry_run_review_is_sent_again_since_it_stores_nothing(self) -> None:
        review = {"review_id": "r", "dry_run": True}
        with FakeServer(unavailable(1, review)) as fake:
            ws = Whetstone(fake.url, "tok", "demo", retries=1, backoff=0.01)
            self.assertEqual(ws.review(dry_run=True), review)
        self.assertEqual(len(fake.seen), 2)

    def test_429_is_retried_for_any_call_after_its_retry_after(self) -> None:
        def answer(seen, n):
            if n == 1:
                return 429, {"retry-after": "1"}, error_body("rate_limited", "retry in 1 s")
            return 200, {}, ROUTE

        with FakeServer(answer) as fake:
            ws = Whetstone(fake.url, "tok", "demo", retries=1, backoff=0.01)
            started = time.monotonic()
            self.assertEqual(ws.route("will it rain?"), ROUTE)
            elapsed = time.monotonic() - started
        self.assertEqual(len(fake.seen), 2)
        self.assertGreaterEqual(elapsed, 1.0)
        self.assertLess(elapsed, 3.0)

    def test_429_once_retries_are_spent_carries_the_wait_asked_for(self) -> None:
        answer = lambda seen, n: (429, {"retry-after": "0"}, error_body("rate_limited", "slow down"))  # noqa: E731
        with FakeServer(answer) as fake:
            ws = Whetstone(fake.url, "tok", "demo", retries=2, backoff=0.01)
            with self.assertRaises(RateLimitedError) as caught:
                ws.route("x")
        self.assertEqual(len(fake.seen), 3)
        self.assertEqual((caught.exception.code, caught.exception.retry_after), ("rate_limited", 0.0))

    def test_retries_0_sends_once(self) -> None:
        with FakeServer(unavailable(1, SETTINGS)) as fake:
            ws = Whetstone(fake.url, "tok", "demo", retries=0)
            with self.assertRaises(ServiceUnavailableError):
                ws.config()
        self.assertEqual(len(fake.seen), 1)

    def test_a_conflict_is_raised_at_once_and_carries_cf_ray_as_request_id(self) -> None:
        answer = lambda seen, n: (409, {"cf-ray": "8f1e2d3c4b5a6978-LIS"}, error_body("conflict", "not proposed"))  # noqa: E731
        with FakeServer(answer) as fake:
            ws = Whetstone(fake.url, "tok", "demo", retries=3)
            with self.assertRaises(ConflictError) as caught:
                ws.config()
        self.assertEqual(len(fake.seen), 1)
        err = caught.exception
        self.assertEqual((err.status, err.code, err.message), (409, "conflict", "not proposed"))
        self.assertEqual(err.request_id, "8f1e2d3c4b5a6978-LIS")

    def test_an_unknown_500_is_a_server_error(self) -> None:
        answer = lambda seen, n: (500, {}, error_body("internal", "internal error"))  # noqa: E731
        with FakeServer(answer) as fake:
            with self.assertRaises(ServerError) as caught:
                Whetstone(fake.url, "tok", "demo", retries=2).config()
        self.assertEqual((caught.exception.code, len(fake.seen)), ("internal", 1))

    def test_a_refused_connection_is_retried_then_raised_with_no_status(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        ws = Whetstone("http://127.0.0.1:%d" % port, "tok", "demo", retries=2, backoff=0.01)
        waits: list = []
        ws._http.sleep = waits.append  # a refused connection never reached a server: even a route goes again
        with self.assertRaises(WhetstoneConnectionError) as caught:
            ws.route("x")
        self.assertEqual((caught.exception.status, caught.exception.code), (None, "connection_refused"))
        self.assertEqual(len(waits), 2)

    def test_sends_the_token_and_json_and_escapes_path_segments(self) -> None:
        with FakeServer(lambda seen, n: (200, {}, {"tools": []})) as fake:
            ws = Whetstone(fake.url + "/", "wsk_secret", "demo")
            ws.tool_activity("a/b", bucket="hour", span=3)
            ws.set_config({"top_k": 3})
        get, put = fake.seen
        self.assertEqual(get["path"], "/v1/agents/demo/tools/a%2Fb/activity?bucket=hour&span=3")
        self.assertEqual(get["headers"]["authorization"], "Bearer wsk_secret")
        self.assertNotIn("content-type", get["headers"])
        self.assertEqual((put["method"], put["body"]), ("PUT", {"top_k": 3}))
        self.assertEqual(put["headers"]["content-type"], "application/json")


if __name__ == "__main__":
    unittest.main()
