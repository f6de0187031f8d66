"""Item 6: a client_order_id never repeats for an account across database resets. Every
database carries a random order epoch, part of each id; orders of another epoch are
foreign: never matched to an intent, their positions adopted."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import structlog

from service.bench.chaos import chaos_settings, run_worker_process
from service.bench.daemon_harness import LIGHT_EFFORT, write_config
from service.broker.sim import SimBroker
from service.market.synthetic import SyntheticMarket
from service.settings import SyntheticMarketSettings
from service.state.order_ids import OrderIds
from service.state.store import StateStore
from service.strategy import client_order_id
from service.types import CLIENT_ORDER_ID_RE, OrderIntent, OrderStatus, Side
from service.worker.assembly import sim_broker_path, state_path
from service.worker.reconcile import Reconciler

OLD_SCHEMA = (Path(__file__).parent.parent / "data" / "state_schema_v1.sql").read_text()
MARKET = SyntheticMarketSettings(seed=3)
T0 = MARKET.start + 200 * SyntheticMarket(MARKET).bar_interval


def _ids(path: Path, account: str = "alpha") -> OrderIds:
    store = StateStore(path, account=account)
    try:
        return store.ids
    finally:
        store.close()


def _intent_ids(path: Path) -> set[str]:
    store = StateStore(path)
    try:
        return {cid for cid, *_ in store.intents()}
    finally:
        store.close()


def test_a_new_database_gets_a_new_epoch_so_its_ids_differ_from_the_old_ones(
    tmp_path: Path,
) -> None:
    old = _ids(tmp_path / "alpha.sqlite")
    assert _ids(tmp_path / "alpha.sqlite") == old, "the epoch is stored with the database"
    (tmp_path / "alpha.sqlite").rename(tmp_path / "alpha.sqlite.corrupt")
    new = _ids(tmp_path / "alpha.sqlite")
    assert new.epoch != old.epoch
    made = client_order_id(new.tag, 1, "SPY")
    assert made != client_order_id(old.tag, 1, "SPY")
    assert new.update_of(made) == 1
    assert old.update_of(made) == 0 and new.update_of(client_order_id(old.tag, 1, "SPY")) == 0


def test_ids_stay_legal_and_short_for_the_longest_account_seq_and_symbol() -> None:
    for account in ("a", "abcdefghi", "abcdefghij", "A234567890123456", "a-_-_-_-_-_-_-_-"):
        ids = OrderIds(account=account, epoch="0zzzzz")
        for symbol in ("SPY", "ABCDEFGHIJ/ABCDE", "ABCDEFGHIJ.ABCDE"):
            cid = client_order_id(ids.tag, 9_999_999_999, symbol)
            assert CLIENT_ORDER_ID_RE.match(cid), cid
            assert ids.update_of(cid) == 9_999_999_999
    long_a, long_b = OrderIds("accountnumber001", "0aaaaa"), OrderIds("accountnumber002", "0aaaaa")
    assert long_a.tag != long_b.tag, "two long accounts must not share an id prefix"


def test_an_old_database_gets_an_epoch_and_still_owns_its_old_form_ids(tmp_path: Path) -> None:
    path = tmp_path / "alpha.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
        db.execute("INSERT INTO intents (client_order_id, seq, symbol, side, qty, status) "
                   "VALUES ('rt-alpha-3-SPY', 3, 'SPY', 'buy', 1, 'pending')")
    ids = _ids(path)
    assert ids.epoch and ids.legacy
    assert ids.update_of("rt-alpha-3-SPY") == 3, "its pending intents must still resolve"
    assert ids.update_of("rt-beta-3-SPY") == 0
    assert _ids(path) == ids
    fresh = _ids(tmp_path / "fresh.sqlite")
    assert not fresh.legacy and fresh.update_of("rt-alpha-3-SPY") == 0


def test_after_a_reset_orders_of_the_old_epoch_are_foreign_cancelled_and_adopted(
    tmp_path: Path,
) -> None:
    """The broker still holds a working order of the moved-aside database, from an update
    later than the new one's newest checkpoint: not a lost update (it is foreign), so it
    is cancelled, never matched, and the broker's position is adopted."""
    now = [T0]
    broker = SimBroker(tmp_path / "b.sqlite", SyntheticMarket(MARKET), lambda: now[0])
    old = _ids(tmp_path / "alpha.sqlite")
    broker.submit(OrderIntent(client_order_id(old.tag, 5, "SPY"), "SPY", Side.BUY, 3))
    now[0] = T0 + SyntheticMarket(MARKET).bar_interval  # that one fills
    working = client_order_id(old.tag, 9, "SPY")
    broker.submit(OrderIntent(working, "SPY", Side.BUY, 2))
    (tmp_path / "alpha.sqlite").rename(tmp_path / "alpha.sqlite.corrupt")
    store = StateStore(tmp_path / "alpha.sqlite", account="alpha")
    reconciler = Reconciler(broker, store)
    with structlog.testing.capture_logs() as logs:
        reconciler.at_start(("SPY",), "alpha", 0)  # before: "lost committed updates"
        reconciler.adopt_positions(broker.snapshot())  # nothing working on SPY now
    assert broker.lookup(working).status == OrderStatus.CANCELED  # type: ignore[union-attr]
    [adopted] = [e for e in logs if e["event"] == "position.adopted"]
    assert adopted["broker_qty"] == 3.0
    new_id = client_order_id(store.ids.tag, 5, "SPY")
    assert broker.lookup(new_id) is None, "a new intent would match an old order"


def test_a_reset_database_trades_on_with_ids_no_old_broker_order_matches(
    tmp_path: Path,
) -> None:
    """The worker end to end: trade, move the database aside, trade again; every new
    intent reaches the broker as an order of its own (no phantom fills)."""
    config = write_config(tmp_path / "config", chaos_settings(LIGHT_EFFORT))
    state = tmp_path / "state"
    assert run_worker_process(config, state, "alpha", 8, None) == 0
    before = _intent_ids(state_path(state, "alpha"))
    assert before
    for suffix in ("", "-wal", "-shm"):
        moved = Path(f"{state_path(state, 'alpha')}{suffix}")
        if moved.exists():
            moved.rename(f"{moved}.corrupt")

    assert run_worker_process(config, state, "alpha", 8, None) == 0

    after = _intent_ids(state_path(state, "alpha"))
    assert after and not after & before, "an id of the old database was reused"
    with sqlite3.connect(sim_broker_path(state, "alpha")) as db:
        orders = {r[0] for r in db.execute("SELECT client_order_id FROM orders")}
    assert after <= orders and len(orders) == len(before) + len(after)
