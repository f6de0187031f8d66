"""One account, one host (issue 17): a worker does not start while another state database
(another order epoch) is still placing this account's orders.

The detection against real brokers (the simulated one, whose times are market time, is
driven by a fake clock), then two real daemons of ONE account against ONE local
Alpaca-compatible server: B, started while A trades, refuses with 75 naming A's epoch.
Waits are on log events with deadlines, never sleeps."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import structlog
from alpaca_daemon import key_env, write_config
from alpaca_server import AlpacaServer
from alpaca_server.book import START
from alpaca_server.clients import broker_for
from conftest import DaemonProcess

from service.broker.sim import SimBroker
from service.config_loader import load_config
from service.exit_codes import EX_TEMPFAIL
from service.market.synthetic import SyntheticMarket
from service.settings import SyntheticMarketSettings
from service.state.order_ids import OrderIds, account_part
from service.state.store import StateStore
from service.status.document import status_document
from service.supervisor.runtime_status import RuntimeStatus
from service.types import OrderIntent, Side
from service.worker.twin_guard import epoch_of, refuse_twin, twin_at

OURS, TWIN, RETIRED = "1ourss", "7twin0", "3old00"
IDS = OrderIds("alpha", OURS)
WINDOW_S = 300.0
MINUTE = timedelta(minutes=1)
T0 = START + 200 * MINUTE  # market time of the simulated broker's first order


class Rig:
    """The simulated broker with market time in the test's hand."""

    def __init__(self, path: Path) -> None:
        self.now = T0
        market = SyntheticMarket(SyntheticMarketSettings(seed=11, start=START))
        self.broker = SimBroker(path, market, lambda: self.now)

    def place(self, cid: str, at: datetime) -> None:
        self.now = at
        self.broker.submit(OrderIntent(cid, "SPY", Side.BUY, 1.0))


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    rig = Rig(tmp_path / "broker.sqlite")
    yield rig
    rig.broker.close()


# -- which ids name a twin ------------------------------------------------------------------


@pytest.mark.parametrize(("cid", "minutes_ago", "twin"), [
    (f"rt-{TWIN}-alpha-12-SPY", 1, TWIN),  # another database of this account: a twin
    (f"rt-{TWIN}-alpha-12-BRK_B", 4.9, TWIN),  # inside the window
    (f"rt-{OURS}-alpha-12-SPY", 1, None),  # our own
    ("rt-alpha-12-SPY", 1, None),  # the previous release's id, without an epoch
    (f"rt-{TWIN}-beta-12-SPY", 1, None),  # another account's
    (f"rt-{TWIN}-alpha-2-12-SPY", 1, None),  # account "alpha-2", not "alpha"
    ("my-hand-placed-order", 1, None),
    (f"rt-{TWIN}-alpha-x-SPY", 1, None),  # not one of ours: no seq
    (f"rt-{TWIN}-alpha-12-SPY", 5.1, None),  # older than the window: not arriving
], ids=["foreign", "foreign-in-window", "own", "legacy", "other-account", "dashed-account",
        "hand-placed", "no-seq", "old"])
def test_only_recent_orders_of_this_account_from_another_epoch_name_a_twin(
    rig: Rig, cid: str, minutes_ago: float, twin: str | None
) -> None:
    now = T0 + 10 * MINUTE
    rig.place(cid, now - minutes_ago * MINUTE)
    found = twin_at(rig.broker, IDS, WINDOW_S, now)
    assert (found and found.epoch) == twin
    assert twin_at(rig.broker, OrderIds("alpha", OURS, legacy=True), WINDOW_S, now) == found


def test_the_newest_foreign_epoch_is_named_with_its_newest_order(rig: Rig) -> None:
    now = T0 + 10 * MINUTE
    rig.place(f"rt-{RETIRED}-alpha-40-SPY", now - 4 * MINUTE)
    rig.place(f"rt-{TWIN}-alpha-7-SPY", now - 3 * MINUTE)
    rig.place(f"rt-{TWIN}-alpha-8-SPY", now - 2 * MINUTE)
    rig.place(f"rt-{OURS}-alpha-3-SPY", now - 1 * MINUTE)
    found = twin_at(rig.broker, IDS, WINDOW_S, now)
    assert found is not None and (found.epoch, found.orders) == (TWIN, 2)
    assert (found.newest.client_order_id, found.newest.submitted_at) == (
        f"rt-{TWIN}-alpha-8-SPY", now - 2 * MINUTE)


def test_a_long_account_name_is_matched_by_its_digest_part(rig: Rig) -> None:
    ids = OrderIds("a-long-account", OURS)
    rig.place(f"rt-{TWIN}-{account_part(ids.account)}-5-SPY", T0)
    found = twin_at(rig.broker, ids, WINDOW_S, T0 + MINUTE)
    assert found is not None and found.epoch == TWIN
    assert epoch_of(f"rt-{TWIN}-{account_part(ids.account)}-5-SPY", "alpha") is None


def test_once_the_twins_newest_order_ages_past_the_window_the_account_starts(rig: Rig) -> None:
    rig.place(f"rt-{TWIN}-alpha-8-SPY", T0)
    window = timedelta(seconds=WINDOW_S)
    assert twin_at(rig.broker, IDS, WINDOW_S, T0 + window - MINUTE) is not None
    assert twin_at(rig.broker, IDS, WINDOW_S, T0 + window) is None
    assert twin_at(rig.broker, IDS, 0, T0) is None, "twin_window_s = 0: not looked for"


def test_a_twin_is_one_error_event_and_exit_75_which_status_reports(
    rig: Rig, tmp_path: Path
) -> None:
    rig.place(f"rt-{TWIN}-alpha-8-SPY", T0)
    with structlog.testing.capture_logs() as logs, pytest.raises(SystemExit) as exited:
        refuse_twin(rig.broker, IDS, WINDOW_S, T0 + MINUTE)
    assert exited.value.code == EX_TEMPFAIL
    [event] = logs
    assert {k: event[k] for k in ("event", "log_level", "twin_epoch", "twin_client_order_id",
                                  "twin_submitted_at", "epoch", "clear_in_s", "exit_code")} == {
        "event": "worker.twin_detected", "log_level": "error", "twin_epoch": TWIN,
        "twin_client_order_id": f"rt-{TWIN}-alpha-8-SPY", "twin_submitted_at": T0.isoformat(),
        "epoch": OURS, "clear_in_s": 240.0, "exit_code": EX_TEMPFAIL}
    assert TWIN in event["reason"] and "240 s" in event["next"]
    runtime = RuntimeStatus(tmp_path, "hash")  # the supervisor's view of the worker's event
    runtime.on_event({**event, "level": "error", "account": "alpha", "pid": os.getpid() + 1})
    assert runtime.accounts["alpha"].worker_error == {
        "event": "worker.twin_detected", "at": None, "reason": event["reason"],
        "exit_code": EX_TEMPFAIL}
    with structlog.testing.capture_logs() as quiet:
        refuse_twin(rig.broker, IDS, WINDOW_S, T0 + 10 * MINUTE)  # returns: no twin now
    assert quiet == []


# -- two daemons, one account --------------------------------------------------------------


def twin_config(folder: Path, server: AlpacaServer, window_s: float) -> Path:
    path = write_config(folder, server)
    text = path.read_text().replace("[supervision]\n", f"[supervision]\ntwin_window_s = "
                                                         f"{window_s}\n")
    path.write_text(text)
    return path


def epoch_in(state: Path) -> str:
    store = StateStore(state / "alpha.sqlite")
    try:
        return store.ids_for("alpha").epoch
    finally:
        store.close()


def test_a_second_daemon_of_one_account_refuses_to_start_while_the_first_trades(
    run_daemon: Callable[..., DaemonProcess], alpaca_server: AlpacaServer, tmp_path: Path
) -> None:
    server, window_s = alpaca_server, 60.0
    config = twin_config(tmp_path / "config", server, window_s)

    def daemon(state: str) -> DaemonProcess:
        return run_daemon("run", "--config", str(config), "--state-dir", str(tmp_path / state),
                          "--stop-after", "100000", env=key_env(server))

    first = daemon("a")
    first.wait_for(lambda e: e.get("event") == "order.submitted", timeout=120)
    second = daemon("b")  # its own state directory: a new database, a new epoch
    refused = second.wait_for(lambda e: e.get("event") == "worker.twin_detected", timeout=120)
    second.wait_for(lambda e: e.get("event") == "worker.exited" and e.get("exit_code") == 75)
    assert first.proc.poll() is None, "the first daemon was still trading"
    for each in (second, first):
        each.signal(signal.SIGTERM)  # both stop at once
    for each in (second, first):
        assert each.wait_exit(timeout=60) == 0, each.report("bad exit")

    a_epoch, b_epoch = epoch_in(tmp_path / "a"), epoch_in(tmp_path / "b")
    assert (refused["account"], refused["twin_epoch"], refused["epoch"]) == (
        "alpha", a_epoch, b_epoch)
    assert refused["twin_client_order_id"].startswith(f"rt-{a_epoch}-alpha-")
    assert refused["exit_code"] == 75 and a_epoch in refused["reason"]
    assert not second.named("worker.started") and not second.named("order.submitted")
    assert {epoch_of(cid, "alpha") for cid in server.account.orders} == {a_epoch}
    cause = status_document(load_config(config), tmp_path / "b", datetime.now(UTC))[
        "accounts"][0]["cause"]
    assert cause["event"] == "worker.twin_detected" and a_epoch in cause["reason"]

    # A has stopped: once its newest order is older than the window, B's account starts.
    newest = max(o.placed_at for o in server.account.orders.values())
    ids = OrderIds("alpha", b_epoch)
    broker, window = broker_for(server), timedelta(seconds=window_s)
    found = twin_at(broker, ids, window_s, newest + window - timedelta(seconds=1))
    assert found is not None and found.epoch == a_epoch
    assert twin_at(broker, ids, window_s, newest + window) is None
