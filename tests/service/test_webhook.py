"""The webhook sender against a real HTTP server on 127.0.0.1: what it posts, its retries,
and that its logs never show more of the URL than the host. No sleeps: the test waits on
what the server received, and on the sender's stop (which joins its thread)."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator, MutableMapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from structlog.testing import capture_logs

from service.alerts.message import Alert
from service.alerts.webhook import WebhookSender, url_host

SECRET_PATH = "/services/T000/B000/s3cr3t-token"
ALERT = Alert("parked", "alpha", "2026-12-01T15:00:00Z", "alpha is parked", {"exit_code": 78})


class Hook(ThreadingHTTPServer):
    def __init__(self, failures: int = 0) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.failures = failures  # the first N requests get a 500
        self.received: queue.Queue[tuple[str, dict[str, str], Any]] = queue.Queue()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{SECRET_PATH}?token=abc"


class Handler(BaseHTTPRequestHandler):
    server: Hook

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.server.failures > 0:
            self.server.failures -= 1
            self.send_error(500, "down for the test")
            return
        self.server.received.put((self.path, dict(self.headers), json.loads(body)))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep the test's output clean


@pytest.fixture
def hook(request: pytest.FixtureRequest) -> Iterator[Hook]:
    server = Hook(getattr(request, "param", 0))
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def send(url: str, *jobs: Any, attempts: int = 3) -> list[MutableMapping[str, Any]]:
    """Start a sender, queue `jobs`, stop it (delivering them); the log lines it wrote."""
    sender = WebhookSender(url, timeout_s=5.0, attempts=attempts, backoff_s=0.01)
    with capture_logs() as logs:
        sender.start()
        for job in jobs:
            assert sender.submit(job)
        sender.stop(flush_s=10.0)
    assert "s3cr3t" not in json.dumps(logs) and "token" not in json.dumps(logs)
    return logs


def test_it_posts_the_message_as_json_and_logs_the_host_only(hook: Hook) -> None:
    logs = send(hook.url, ALERT)
    path, headers, body = hook.received.get(timeout=5)
    assert path == f"{SECRET_PATH}?token=abc"
    assert headers["Content-Type"] == "application/json"
    assert body == {"kind": "parked", "account": "alpha", "at": "2026-12-01T15:00:00Z",
                    "summary": "alpha is parked", "details": {"exit_code": 78},
                    "text": "regime-trader: alpha is parked"}
    [sent] = [e for e in logs if e["event"] == "alert.sent"]
    assert sent["host"] == f"127.0.0.1:{hook.server_address[1]}" and sent["status"] == 200
    assert sent["kind"] == "parked" and sent["attempt"] == 1


def test_a_message_built_on_the_sender_s_thread_goes_out_too(hook: Hook) -> None:
    send(hook.url, lambda: ALERT, lambda: None)  # None: nothing to say
    assert hook.received.get(timeout=5)[2]["kind"] == "parked"
    assert hook.received.empty()


@pytest.mark.parametrize("hook", [2], indirect=True)
def test_a_failing_webhook_is_retried_with_backoff(hook: Hook) -> None:
    logs = send(hook.url, ALERT)
    assert hook.received.get(timeout=5)[2]["kind"] == "parked"
    failed = [e for e in logs if e["event"] == "alert.failed"]
    assert [(e["attempt"], e["retry_in_s"]) for e in failed] == [(1, 0.01), (2, 0.02)]
    assert failed[0]["error"].startswith("HTTP 500") and failed[0]["log_level"] == "warning"
    assert [e["attempt"] for e in logs if e["event"] == "alert.sent"] == [3]


@pytest.mark.parametrize("hook", [5], indirect=True)
def test_past_its_attempts_a_message_is_dropped_with_a_log_line(hook: Hook) -> None:
    logs = send(hook.url, ALERT, attempts=3)
    assert [e["attempt"] for e in logs if e["event"] == "alert.failed"] == [1, 2, 3]
    [dropped] = [e for e in logs if e["event"] == "alert.dropped"]
    assert dropped["log_level"] == "error" and dropped["attempts"] == 3
    assert hook.received.empty() and hook.failures == 2


def test_an_unreachable_webhook_fails_without_naming_its_path() -> None:
    closed = Hook()  # bound, then closed: nothing listens on its port
    url = closed.url
    closed.server_close()
    logs = send(url, ALERT, attempts=2)
    failed = [e for e in logs if e["event"] == "alert.failed"]
    assert len(failed) == 2 and "Connection" in failed[0]["error"]


def test_a_full_queue_drops_the_newest_and_never_blocks() -> None:
    sender = WebhookSender("https://hooks.example.com/x", timeout_s=1.0, capacity=1)
    with capture_logs() as logs:
        assert sender.submit(ALERT)  # not started: it stays queued
        assert not sender.submit(ALERT)
    assert [(e["event"], e["reason"]) for e in logs] == [("alert.dropped", "queue full")]


def test_the_host_is_all_that_logs_show_of_a_url() -> None:
    assert url_host("https://hooks.slack.com/services/T/B/XYZ?x=1") == "hooks.slack.com"
    assert url_host("http://user:pw@[::1]:8080/p") == "[::1]:8080"
