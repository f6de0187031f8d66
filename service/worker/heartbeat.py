"""What a worker tells its supervisor over the control pipe: signs of life from the main
loop, and every log event (service/event_tap.py) from any thread, sent where it is logged.

An event is sent as plain JSON values, so it unpickles anywhere. Most events (an order's,
which a worker logs two of per order) hold only str, int, float, bool and None values:
they go as they are (`plain`); until the thirty-eighth session every event was copied
through JSON first, about 6 us of the ~40 an event cost a worker on this VM
(docs/bench-results/log_event_cost.py; docs/benchmarks.md, thirty-eighth session, which
also tells of a queue with a sender thread tried and taken out again).
"""

from __future__ import annotations

import contextlib
import json
import threading
from multiprocessing.connection import Connection
from typing import Any


class Heartbeat:
    """Messages from the main loop to the supervisor: ("started" | "beat" | "updated" |
    "retired", seq, allowance_s), where allowance_s is how long until the next one may
    come; and ("event", fields) for each log event, from any thread."""

    _lock = threading.Lock()  # one pipe, written from the loop and from helper threads

    def __init__(self, conn: Connection | None) -> None:
        self.conn = conn

    def send(self, kind: str, seq: int, allowance_s: float) -> None:
        if self.conn is not None:
            with self._lock:
                self.conn.send((kind, seq, allowance_s))

    def forward(self, event: dict[str, Any]) -> None:
        """A log event, made plain (JSON values only) so it unpickles anywhere."""
        if self.conn is None:
            return
        fields = plain(event)
        with self._lock, contextlib.suppress(OSError):  # the supervisor is gone: we exit
            self.conn.send(("event", fields))


_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain(event: dict[str, Any]) -> dict[str, Any]:
    """`event` with JSON values only: itself where every value is a str, int, float, bool
    or None (an order event, most events: the tap hands each listener its own copy, and
    such values cannot change after), else through JSON (nested values copied, others as
    their str), which cost 6 us an event on this VM."""
    if all(type(value) in _SCALARS for value in event.values()):
        return event
    return dict(json.loads(json.dumps(event, default=str)))
