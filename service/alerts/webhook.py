"""POST alert messages to the webhook, from a thread of their own.

The supervisor's loop only queues a message (a bounded queue: when the webhook is down for
long, the newest messages are dropped, each with a log line, rather than memory growing);
this thread POSTs each one as JSON with the configured timeout, retries a failed POST a
few times with a doubling backoff, then drops it with a log line. Logs name the webhook's
host only: a webhook URL's path or query often is the token (hooks.slack.com/services/...).
"""

from __future__ import annotations

import http.client
import json
import queue
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from urllib.parse import urlsplit

import structlog

from service import __version__
from service.alerts.message import Alert

log = structlog.get_logger("service.supervisor")
Job = Alert | Callable[[], Alert | None]  # a message, or one to build on this thread
CAPACITY = 100  # messages waiting; past it new ones are dropped (alert.dropped)
MAX_REPLY = 64 * 1024  # of the reply read (and ignored) so the connection ends cleanly


class WebhookSender:
    def __init__(self, url: str, timeout_s: float, attempts: int = 4, backoff_s: float = 2.0,
                 capacity: int = CAPACITY) -> None:
        self.url = url
        self.host = url_host(url)
        self.timeout_s = timeout_s
        self.attempts = attempts
        self.backoff_s = backoff_s  # before the 2nd attempt; doubled before each next one
        self._queue: queue.Queue[Job | None] = queue.Queue(maxsize=capacity)  # None: stop
        self._hurry = threading.Event()  # set at stop: retry without waiting
        self._thread = threading.Thread(target=self._run, name="alert-webhook", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def submit(self, job: Job) -> bool:
        """Queue a message; never blocks. False (and a log line) when the queue is full."""
        try:
            self._queue.put_nowait(job)
        except queue.Full:
            kind = job.kind if isinstance(job, Alert) else "daily_pnl"
            log.error("alert.dropped", kind=kind, host=self.host, reason="queue full",
                      next="the webhook has been failing; see alert.failed")
            return False
        return True

    def stop(self, flush_s: float) -> None:
        """Deliver what is queued, within `flush_s` (the thread is a daemon: a webhook that
        does not answer never holds up the exit)."""
        self._hurry.set()
        if not self._thread.is_alive():
            return
        try:
            self._queue.put(None, timeout=flush_s)
        except queue.Full:
            return  # still busy with the backlog at the deadline: what is left is lost
        self._thread.join(flush_s)

    def _run(self) -> None:
        while (job := self._queue.get()) is not None:
            alert = job if isinstance(job, Alert) else job()
            if alert is not None:
                self.deliver(alert)

    def deliver(self, alert: Alert) -> bool:
        body = json.dumps(alert.document()).encode("utf-8")
        # `about`, not `account`: a failed delivery is no error of the account's (status)
        who = {"kind": alert.kind, "about": alert.account, "host": self.host}
        for attempt in range(1, self.attempts + 1):
            try:
                status = self._post(body)
            except (OSError, http.client.HTTPException) as error:  # URLError, HTTPError, timeouts
                wait_s = self.backoff_s * 2 ** (attempt - 1) if attempt < self.attempts else None
                log.warning("alert.failed", **who, attempt=attempt, error=self._said(error),
                            retry_in_s=wait_s)
                if wait_s is not None:
                    self._hurry.wait(wait_s)
                continue
            log.info("alert.sent", **who, attempt=attempt, status=status)
            return True
        log.error("alert.dropped", **who, attempts=self.attempts,
                  reason="every attempt failed", next="the message is not kept")
        return False

    def _post(self, body: bytes) -> int:
        # AlertSettings admits http:// and https:// URLs only (no file:, no ftp:)
        request = urllib.request.Request(self.url, data=body, method="POST", headers={
            "Content-Type": "application/json", "User-Agent": f"regime-trader/{__version__}"})
        with urllib.request.urlopen(request, timeout=self.timeout_s) as reply:
            reply.read(MAX_REPLY)
            return int(reply.status)

    def _said(self, error: BaseException) -> str:
        """What went wrong, without the URL (its path or query may be the token)."""
        if isinstance(error, urllib.error.HTTPError):
            return f"HTTP {error.code} {error.reason}"
        reason = error.reason if isinstance(error, urllib.error.URLError) else error
        text = f"{type(reason).__name__}: {reason}" if isinstance(reason, BaseException) \
            else str(reason)
        return text.replace(self.url, self.host)


def url_host(url: str) -> str:
    """`host[:port]` of a URL: what the logs may show of it."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    host = f"[{host}]" if ":" in host else host
    try:
        port = parts.port
    except ValueError:  # a port that is not a number: the POST says so, with the host
        port = None
    return f"{host}:{port}" if port else host
