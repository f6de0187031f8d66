"""One contract, every broker: the simulated broker and the Alpaca adapter (alpaca-py's
real HTTP code against the local Alpaca-compatible server) must behave the same."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from alpaca_server import AlpacaServer
from alpaca_server.book import START
from alpaca_server.clients import broker_for

from service.broker.base import Broker
from service.broker.sim import SimBroker
from service.market.synthetic import SyntheticMarket
from service.settings import SyntheticMarketSettings
from service.types import OrderIntent, OrderStatus, Side

MINUTE = timedelta(minutes=1)
T0 = START + 200 * MINUTE


@dataclass
class Rig:
    broker: Broker
    advance: Callable[[datetime], None]  # market time moves on (the next bar closes)


def sim_rig(tmp_path: Path) -> Iterator[Rig]:
    now = [T0]
    market = SyntheticMarket(SyntheticMarketSettings(seed=11, start=START))
    broker = SimBroker(tmp_path / "broker.sqlite", market, lambda: now[0])
    yield Rig(broker, lambda t: now.__setitem__(0, t))
    broker.close()


def alpaca_rig(tmp_path: Path) -> Iterator[Rig]:
    server = AlpacaServer().start()
    server.account.advance(T0)
    yield Rig(broker_for(server), server.account.advance)
    server.stop()


@pytest.fixture(params=["sim", "alpaca"])
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Rig]:
    yield from (sim_rig if request.param == "sim" else alpaca_rig)(tmp_path)


def buy(cid: str, qty: float = 10.0, symbol: str = "SPY") -> OrderIntent:
    return OrderIntent(cid, symbol, Side.BUY, qty)


def test_a_fresh_account_has_cash_and_nothing_else(rig: Rig) -> None:
    snapshot = rig.broker.snapshot()
    assert snapshot.cash == snapshot.equity == 100_000.0
    assert snapshot.positions == {} and snapshot.open_orders == ()
    assert rig.broker.market_open()


def test_an_accepted_order_is_found_by_its_client_order_id(rig: Rig) -> None:
    outcome = rig.broker.submit(buy("rt-c-1-SPY"))
    assert outcome.status == OrderStatus.ACCEPTED and outcome.broker_order_id
    found = rig.broker.lookup("rt-c-1-SPY")
    assert found is not None and found.broker_order_id == outcome.broker_order_id
    [working] = rig.broker.snapshot().open_orders
    assert (working.client_order_id, working.symbol, working.side) == ("rt-c-1-SPY", "SPY",
                                                                       Side.BUY)


def test_submitting_the_same_id_twice_never_makes_a_second_order(rig: Rig) -> None:
    first = rig.broker.submit(buy("rt-c-2-SPY"))
    again = rig.broker.submit(buy("rt-c-2-SPY"))
    assert again.broker_order_id == first.broker_order_id
    assert len(rig.broker.snapshot().open_orders) == 1


def test_an_id_the_broker_never_saw_looks_up_as_none(rig: Rig) -> None:
    assert rig.broker.lookup("rt-c-404-SPY") is None


def test_an_order_fills_at_the_next_bar_and_becomes_a_position(rig: Rig) -> None:
    rig.broker.submit(buy("rt-c-3-SPY", qty=10))
    rig.advance(T0 + MINUTE)
    filled = rig.broker.lookup("rt-c-3-SPY")
    assert filled is not None and filled.status == OrderStatus.FILLED
    assert filled.filled_qty == 10 and filled.filled_avg_price
    snapshot = rig.broker.snapshot()
    assert snapshot.qty("SPY") == 10 and snapshot.open_orders == ()
    assert snapshot.cash == pytest.approx(100_000.0 - 10 * filled.filled_avg_price, abs=0.01)


def test_buying_beyond_buying_power_is_rejected_with_a_reason(rig: Rig) -> None:
    outcome = rig.broker.submit(buy("rt-c-4-SPY", qty=1_000_000))
    assert outcome.status == OrderStatus.REJECTED
    assert "insufficient buying power" in (outcome.reason or "")
    assert rig.broker.snapshot().positions == {}


def test_selling_what_is_not_held_is_rejected(rig: Rig) -> None:
    outcome = rig.broker.submit(OrderIntent("rt-c-5-QQQ", "QQQ", Side.SELL, 1.0))
    assert outcome.status == OrderStatus.REJECTED and "insufficient qty" in (outcome.reason or "")


def test_a_working_order_can_be_cancelled_and_cancelling_twice_is_harmless(rig: Rig) -> None:
    outcome = rig.broker.submit(buy("rt-c-6-SPY"))
    assert outcome.broker_order_id is not None
    rig.broker.cancel(outcome.broker_order_id)
    rig.broker.cancel(outcome.broker_order_id)
    cancelled = rig.broker.lookup("rt-c-6-SPY")
    assert cancelled is not None and cancelled.status == OrderStatus.CANCELED
    rig.advance(T0 + MINUTE)
    assert rig.broker.snapshot().positions == {}
