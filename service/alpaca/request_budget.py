"""One account's request budget: every Alpaca call (trading, data, reconciliation) of a
worker draws from it, so the account stays under Alpaca's 200 requests a minute.

A token bucket (a burst of `BURST`, refilled so that a full minute never exceeds
`per_minute`), plus a block honouring the server: after a 429, or an answer saying no
requests remain, nothing is sent until its `X-Ratelimit-Reset` (epoch seconds).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

import structlog

log = structlog.get_logger("service.broker")

BURST = 10
MAX_BLOCK_S = 60.0  # a reset further away than this is a bad header: cap the block
_EPS = 1e-6
_MIN_PAUSE_S = 0.001
_STOP = threading.Event()  # never set: its wait() is an interruptible, testable pause


def _pause(seconds: float) -> None:
    _STOP.wait(seconds)


class RequestBudget:
    def __init__(
        self,
        per_minute: int,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        pause: Callable[[float], None] = _pause,
    ) -> None:
        if per_minute < 1:
            raise ValueError(f"per_minute must be at least 1, got {per_minute}")
        self._burst = float(min(BURST, per_minute))
        self._rate = max(per_minute - self._burst, 1.0) / 60.0  # tokens per second
        self._monotonic, self._wall, self._pause = monotonic, wall, pause
        self._tokens = self._burst
        self._stamp = monotonic()
        self._blocked_until = 0.0
        self._lock = threading.Lock()
        self.waited_s = 0.0  # total time spent waiting, for logs and tests

    def acquire(self) -> None:
        """Take one request's token, waiting for one (or for the server's reset) if need be."""
        while True:
            with self._lock:
                delay = self._delay()
                if delay <= 0:
                    self._tokens -= 1.0
                    return
            self.waited_s += delay
            self._pause(delay)

    def note(self, status: int, headers: Mapping[str, str]) -> None:
        """Read an answer's rate-limit headers; a 429 or none remaining blocks until reset."""
        remaining = _number(headers.get("X-Ratelimit-Remaining"))
        if status != 429 and (remaining is None or remaining > 0):
            return
        reset = _number(headers.get("X-Ratelimit-Reset"))
        wait_s = 1.0 if reset is None else min(max(reset - self._wall(), 0.0), MAX_BLOCK_S)
        with self._lock:
            self._blocked_until = max(self._blocked_until, self._monotonic() + wait_s)
        log.warning("alpaca.rate_limited", status=status, remaining=remaining, wait_s=wait_s)

    def _delay(self) -> float:
        now = self._monotonic()
        self._tokens = min(self._burst, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now
        if now < self._blocked_until:
            return self._blocked_until - now
        if self._tokens >= 1.0 - _EPS:  # float rounding must never livelock on 0.99999...
            return 0.0
        return max((1.0 - self._tokens) / self._rate, _MIN_PAUSE_S)


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None  # a malformed header is ignored, never fatal
