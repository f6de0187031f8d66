"""Stop means stop: once a worker is asked to stop (SIGTERM, or SIGINT as Ctrl-C sends
it), it POSTs no new order; the intents of its last checkpoint are sent once, at the next
start. The signal comes while an update holds committed intents and is about to send them
(the test-only `pause` fault holds it there until a stop is asked for)."""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import DaemonProcess, Event

from service.state.store import StateStore
from service.worker.assembly import sim_broker_path, state_path

TESTING = {"REGIME_TRADER_TESTING": "1"}


def is_(name: str, account: str) -> Callable[[Event], bool]:
    return lambda e: e.get("event") == name and e.get("account") == account


def broker_orders(state: Path) -> list[str]:
    """Every client_order_id the simulated broker accepted, duplicates included."""
    conn = sqlite3.connect(f"file:{sim_broker_path(state, 'alpha')}?mode=ro", uri=True)
    try:
        return [str(r[0]) for r in conn.execute("SELECT client_order_id FROM orders")]
    finally:
        conn.close()


def open_intents(state: Path) -> set[str]:
    store = StateStore(state_path(state, "alpha"))
    try:
        return {r.intent.client_order_id for r in store.open_intents()}
    finally:
        store.close()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_no_order_is_sent_after_a_stop_and_the_next_start_sends_each_once(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path,
    signum: signal.Signals,
) -> None:
    state = tmp_path / "s"
    env = {**TESTING, "REGIME_TRADER_FAULTS": "pause@after_checkpoint:1#alpha"}
    daemon = run_daemon("run", "--config", str(fast_config), "--state-dir", str(state), env=env)
    paused = daemon.wait_for(is_("fault.paused", "alpha"))
    daemon.signal(signum)
    if signum == signal.SIGINT:  # Ctrl-C reaches the whole foreground process group
        os.kill(paused["pid"], signal.SIGINT)
    assert daemon.wait_exit() == 0
    after = daemon.events[daemon.events.index(paused):]
    sent_after = [e for e in after if is_("order.submitted", "alpha")(e)]
    assert sent_after == [], "orders were POSTed after the stop signal"
    held = open_intents(state)
    assert held and not held & set(broker_orders(state))
    exits = [(e.get("reason"), e.get("exit_code"), e.get("signal"))
             for e in daemon.named("worker.exited", account="alpha")]
    deferrals = daemon.named("orders.deferred", account="alpha")
    assert len(deferrals) == 1, f"no single orders.deferred; alpha's exits: {exits}"
    [deferred] = deferrals
    assert deferred["count"] == len(held)

    again = run_daemon("run", "--config", str(fast_config), "--state-dir", str(state),
                       "--stop-after", "1")
    assert again.wait_exit() == 0
    resent = [e["client_order_id"] for e in again.named("order.submitted", account="alpha")]
    assert all(resent.count(cid) == 1 for cid in held)
    assert all(broker_orders(state).count(cid) == 1 for cid in held)
    assert not held & open_intents(state)
