"""What a worker tells its supervisor over the control pipe (service/worker/heartbeat.py):
its log events, queued where they are logged and sent together by a thread, in the order
they were logged, plain, and never after a beat sent after them. A real pipe; each wait
is on the pipe's own readiness, with a deadline."""

from __future__ import annotations

import multiprocessing as mp
from datetime import UTC, datetime
from multiprocessing.connection import Connection
from typing import Any

from service.worker.heartbeat import Heartbeat, plain

DEADLINE_S = 30.0  # for a thread to run on a loaded machine; never reached when right


def received_until(conn: Connection, last: str) -> list[tuple[Any, ...]]:
    """Messages from the pipe up to and including the first of kind `last`."""
    messages: list[tuple[Any, ...]] = []
    while not messages or messages[-1][0] != last:
        assert conn.poll(DEADLINE_S), f"no message within {DEADLINE_S} s after {messages[-1:]}"
        messages.append(conn.recv())
    return messages


def events_in(messages: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    return [event for kind, *rest in messages if kind == "events" for event in rest[0]]


def test_a_beat_comes_after_every_event_logged_before_it_in_order_and_plain() -> None:
    supervisor, worker = mp.Pipe()
    log, loop = Heartbeat(worker), Heartbeat(worker)  # the log's and the loop's, one pipe
    at = datetime(2026, 1, 5, 16, tzinfo=UTC)
    for n in range(300):
        log.forward({"event": "order.submitted", "n": n, "at": at})
    loop.send("updated", 7, 1.0)
    messages = received_until(supervisor, "updated")
    assert messages[-1] == ("updated", 7, 1.0)
    events = events_in(messages[:-1])
    assert [e["n"] for e in events] == list(range(300))
    assert events[0]["at"] == str(at)  # made plain where logged: a string, not a datetime
    assert {kind for kind, *_ in messages[:-1]} == {"events"}


def test_events_reach_the_supervisor_without_a_beat() -> None:
    """The sender thread sends what is queued: an event logged while the loop waits for a
    bar (a helper thread's, say) is not held until the next beat."""
    supervisor, worker = mp.Pipe()
    Heartbeat(worker).forward({"event": "model.ready", "symbol": "SPY"})
    assert events_in(received_until(supervisor, "events")) == [
        {"event": "model.ready", "symbol": "SPY"}]


def test_an_event_of_plain_values_goes_as_it_is_and_any_other_through_json() -> None:
    """Plain scalars (an order event's) need no copy through JSON; a nested value is
    copied (what is sent is what was said when it was logged) and any other value goes
    as its str."""
    order = {"event": "order.submitted", "qty": 3.0, "filled": 0, "paused": False,
             "reason": None}
    assert plain(order) is order
    rows = [{"symbol": "SPY"}]
    at = datetime(2026, 1, 5, tzinfo=UTC)
    sent = plain({"event": "model.unconverged", "instruments": rows, "at": at})
    rows[0]["symbol"] = "changed after"
    assert sent == {"event": "model.unconverged", "instruments": [{"symbol": "SPY"}],
                    "at": "2026-01-05 00:00:00+00:00"}
