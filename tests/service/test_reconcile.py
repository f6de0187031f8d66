"""Start-up reconciliation: the broker is the truth for positions; stale open orders on our
symbols are cancelled (paper rejects wash trades against them)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import structlog

from service.broker.sim import SimBroker
from service.market.synthetic import SyntheticMarket
from service.settings import SyntheticMarketSettings
from service.state.store import StateStore
from service.types import OrderIntent, OrderStatus, Side
from service.worker.reconcile import Reconciler

SETTINGS = SyntheticMarketSettings(seed=3)
T0 = SETTINGS.start + 200 * SyntheticMarket(SETTINGS).bar_interval


def rig(tmp_path: Path) -> tuple[SimBroker, StateStore, list]:
    now = [T0]
    broker = SimBroker(tmp_path / "b.sqlite", SyntheticMarket(SETTINGS), lambda: now[0])
    return broker, StateStore(tmp_path / "state.sqlite"), now


def test_a_position_we_did_not_make_is_adopted_once_and_logged(tmp_path: Path) -> None:
    broker, store, now = rig(tmp_path)
    broker.submit(OrderIntent("manual-1", "SPY", Side.BUY, 7))  # placed by hand, not by us
    now[0] = T0 + timedelta(minutes=1)
    reconciler = Reconciler(broker, store)
    with structlog.testing.capture_logs() as logs:
        reconciler.at_start(("SPY",))
        reconciler.adopt_positions(broker.snapshot())  # adopted: no second event
    [adopted] = [e for e in logs if e["event"] == "position.adopted"]
    assert (adopted["symbol"], adopted["local_qty"], adopted["broker_qty"]) == ("SPY", 0.0, 7.0)


def test_open_orders_on_our_symbols_that_are_not_our_intents_are_cancelled(
    tmp_path: Path,
) -> None:
    broker, store, _ = rig(tmp_path)
    broker.submit(OrderIntent("manual-2", "SPY", Side.BUY, 1))
    broker.submit(OrderIntent("manual-3", "TLT", Side.BUY, 1))  # not ours to touch
    with structlog.testing.capture_logs() as logs:
        Reconciler(broker, store).at_start(("SPY", "QQQ"))
    assert broker.lookup("manual-2").status == OrderStatus.CANCELED  # type: ignore[union-attr]
    assert broker.lookup("manual-3").status == OrderStatus.ACCEPTED  # type: ignore[union-attr]
    [stale] = [e for e in logs if e["event"] == "order.stale_canceled"]
    assert stale["client_order_id"] == "manual-2" and stale["side"] == "buy"
