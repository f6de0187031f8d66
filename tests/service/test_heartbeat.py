"""What a worker tells its supervisor over the control pipe (service/worker/heartbeat.py):
each log event where it is logged, plain, in the order logged, beats in their place. A
real pipe; each wait is on the pipe's own readiness, with a deadline."""

from __future__ import annotations

import multiprocessing as mp
from datetime import UTC, datetime
from typing import Any

from service.worker.heartbeat import Heartbeat, plain

DEADLINE_S = 30.0  # never reached when right


def test_events_and_beats_arrive_in_the_order_sent_and_plain() -> None:
    supervisor, worker = mp.Pipe()
    log, loop = Heartbeat(worker), Heartbeat(worker)  # the log's and the loop's, one pipe
    at = datetime(2026, 1, 5, 16, tzinfo=UTC)
    for n in range(3):
        log.forward({"event": "order.submitted", "n": n, "at": at})
    loop.send("updated", 7, 1.0)
    messages: list[tuple[Any, ...]] = []
    while len(messages) < 4:
        assert supervisor.poll(DEADLINE_S)
        messages.append(supervisor.recv())
    assert [m[0] for m in messages] == ["event", "event", "event", "updated"]
    assert [m[1]["n"] for m in messages[:3]] == [0, 1, 2]
    assert messages[0][1]["at"] == str(at)  # made plain: a string, not a datetime


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
