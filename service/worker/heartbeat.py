"""What a worker tells its supervisor over the control pipe: signs of life from the main
loop, and every log event (service/event_tap.py) from any thread.

A log event is not sent where it is logged: sent there, each cost the logging thread a
pickle and a pipe write that wakes the supervisor, and an update at 268 instruments logs
two events per order (forwarding was about 20 of the 45 us an event cost a worker on an
H100 host: docs/bench-results/log_event_cost.py). The event is made plain where it is
logged (what is sent is what was said then) and queued; a sender thread sends what has
queued as ONE ("events", [...]) message, GATHER_S after the first event of a burst (an
event then cost a median 32-36 us against 37-38 on this VM; on an H100 host about as
much as before, the sender's pickling holding the GIL about as long as the writes it
saves: docs/benchmarks.md, thirty-eighth session). A beat
first sends what is queued, under the same lock, so the supervisor never hears a beat
before the events logged ahead of it; at exit what is queued is sent too (a SIGKILL loses
what was queued in the last GATHER_S). The event's line on stdout is written where it is
logged, as before.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

# After the first event of a burst, how long the sender waits for the rest: an update's
# order events come some 20-50 us apart, so a burst of a hundred is one or two messages;
# the supervisor hears of an event at most this much later than before.
GATHER_S = 0.002


class Heartbeat:
    """Messages to the supervisor: ("started" | "beat" | "updated" | "retired", seq,
    allowance_s), where allowance_s is how long until the next one may come; and
    ("events", [fields, ...]), the log events queued since the last message. The loop's
    instance (beats) and the log's (events) of one pipe share its Outbox."""

    def __init__(self, conn: Connection | None) -> None:
        self.conn = conn
        self._box = None if conn is None else _outbox(conn)

    def send(self, kind: str, seq: int, allowance_s: float) -> None:
        if self._box is not None:
            with self._box.lock:
                self._box.send_queued()
                self._box.conn.send((kind, seq, allowance_s))

    def forward(self, event: dict[str, Any]) -> None:
        """A log event, made plain (JSON values only, so it unpickles anywhere), queued
        for the pipe's sender thread."""
        if self._box is not None:
            self._box.queue(plain(event))


_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain(event: dict[str, Any]) -> dict[str, Any]:
    """`event` with JSON values only: itself where every value is a str, int, float, bool
    or None (an order event, most events: the tap hands each listener its own copy, and
    such values cannot change after), else through JSON (nested values copied, others as
    their str), which cost 6 us an event on this VM."""
    if all(type(value) in _SCALARS for value in event.values()):
        return event
    return dict(json.loads(json.dumps(event, default=str)))


class Outbox:
    """One control pipe's queued events, the lock every write to it takes, and the thread
    that sends the events (started with the first)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self._queued: list[dict[str, Any]] = []
        self._wake = threading.Event()
        self._sender: threading.Thread | None = None

    def queue(self, plain: dict[str, Any]) -> None:
        with self.lock:
            self._queued.append(plain)
            if self._sender is None:
                self._sender = threading.Thread(target=self._send_when_woken,
                                                name="event-sender", daemon=True)
                self._sender.start()
                atexit.register(self._send_now)
        self._wake.set()

    def send_queued(self) -> None:
        """Send what is queued (the lock held)."""
        if not self._queued:
            return
        queued, self._queued = self._queued, []
        with contextlib.suppress(OSError):  # the supervisor is gone: we exit
            self.conn.send(("events", queued))

    def _send_now(self) -> None:
        with self.lock:
            self.send_queued()

    def _send_when_woken(self) -> None:
        while True:
            self._wake.wait()
            time.sleep(GATHER_S)  # the rest of the burst joins the message
            self._wake.clear()
            self._send_now()


_OUTBOXES: dict[int, Outbox] = {}  # by id(conn): a process has one pipe; tests make more
_OUTBOXES_LOCK = threading.Lock()


def _outbox(conn: Connection) -> Outbox:
    with _OUTBOXES_LOCK:
        box = _OUTBOXES.get(id(conn))
        if box is None or box.conn is not conn:  # an id reused by a newer pipe
            box = _OUTBOXES[id(conn)] = Outbox(conn)
        return box
