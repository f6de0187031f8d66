"""Which faults the local server injects, and when: queued ones first, then at random.

Kinds (what the client sees):
  429               429 with X-Ratelimit-Remaining 0 and a reset time; nothing processed
  500 502 503 504   that status; nothing processed
  504_after_accept  the order IS created, then 504 (what alpaca-py retries into a 422)
  422_after_accept  the order IS created, then 422 40010001 "client_order_id must be unique"
  stall             the request is processed, the answer comes after `stall_s` (past the
                    client's timeout)
  drop              the connection is closed without an answer; nothing processed
  drop_after_accept the request is processed, then the connection is closed
  missing_bar       bars: the newest bar of each symbol is left out (it comes later: late)
  duplicate_bar     bars: every bar of the answer is sent twice
  echo_400 echo_401 echo_403 echo_500
                    that status, with an error body over 200 characters that echoes the
                    request's key and secret (and pieces of them); nothing processed
"""

from __future__ import annotations

import random
import threading
from collections import deque

FAULT_KINDS = (
    "429", "500", "502", "503", "504", "504_after_accept", "422_after_accept",
    "stall", "drop", "drop_after_accept", "missing_bar", "duplicate_bar",
    "echo_400", "echo_401", "echo_403", "echo_500",
)
ECHO_KEYS = {"echo_400": 400, "echo_401": 401, "echo_403": 403, "echo_500": 500}
RANDOM_KINDS = tuple(k for k in FAULT_KINDS if k not in ECHO_KEYS)  # the default at random
BAR_ONLY = frozenset({"missing_bar", "duplicate_bar"})
ORDER_ONLY = frozenset({"504_after_accept", "422_after_accept", "drop_after_accept"})


class Faults:
    def __init__(self) -> None:
        self._queued: dict[str, deque[str]] = {}
        self._rate = 0.0
        self._kinds: tuple[str, ...] = ()
        self._rng = random.Random(0)
        self._lock = threading.Lock()
        self.injected: list[tuple[str, str]] = []  # (route, kind), for the test's report

    def queue(self, route: str, *kinds: str) -> None:
        """The next requests on `route` ("POST /v2/orders", "GET /v2/stocks/bars", ...)."""
        unknown = set(kinds) - set(FAULT_KINDS)
        assert not unknown, f"unknown fault kinds {unknown}"
        with self._lock:
            self._queued.setdefault(route, deque()).extend(kinds)

    def at_random(self, rate: float, seed: int, kinds: tuple[str, ...] = RANDOM_KINDS) -> None:
        with self._lock:
            self._rate, self._kinds, self._rng = rate, kinds, random.Random(seed)

    def stop_random(self) -> None:
        with self._lock:
            self._rate = 0.0

    def draw(self, route: str) -> str | None:
        with self._lock:
            queued = self._queued.get(route)
            kind = queued.popleft() if queued else self._random(route)
            if kind is not None:
                self.injected.append((route, kind))
            return kind

    def _random(self, route: str) -> str | None:
        if not self._rate or self._rng.random() >= self._rate:
            return None
        fits = [k for k in self._kinds if _fits(k, route)]
        return self._rng.choice(fits) if fits else None


def _fits(kind: str, route: str) -> bool:
    if kind in BAR_ONLY:
        return route == "GET /v2/stocks/bars"
    if kind in ORDER_ONLY:
        return route == "POST /v2/orders"
    return True
