"""The simulated broker: idempotent submission, fills at the next bar's open, rejections,
equity marked at the latest close, and an account that outlives the worker."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from datetime import datetime
from pathlib import Path

import pytest

from service.broker.sim import SimBroker
from service.broker.sim_fills import next_position
from service.market.synthetic import SyntheticMarket
from service.settings import SyntheticMarketSettings
from service.types import OrderIntent, OrderStatus, Position, Side

SETTINGS = SyntheticMarketSettings(seed=3)
MARKET = SyntheticMarket(SETTINGS)
MINUTE = MARKET.bar_interval


def at(n: int) -> datetime:
    return SETTINGS.start + n * MINUTE


def bar(symbol: str, n: int) -> tuple[float, float]:
    """(open, close) of bar n."""
    (b,) = MARKET.history([symbol], at(n), 1)[symbol]
    return b.open, b.close


class MarketTime:
    """The bar the worker is processing; tests move it."""

    def __init__(self, n: int) -> None:
        self.t = at(n)

    def __call__(self) -> datetime:
        return self.t

    def to(self, n: int) -> None:
        self.t = at(n)


@pytest.fixture
def clock() -> MarketTime:
    return MarketTime(100)


@pytest.fixture
def broker(tmp_path: Path, clock: MarketTime) -> SimBroker:
    return SimBroker(tmp_path / "broker.db", MARKET, clock)


def buy(cid: str, qty: float, symbol: str = "SPY") -> OrderIntent:
    return OrderIntent(cid, symbol, Side.BUY, qty)


def sell(cid: str, qty: float, symbol: str = "SPY") -> OrderIntent:
    return OrderIntent(cid, symbol, Side.SELL, qty)


def test_an_accepted_order_fills_at_the_open_of_the_next_bar(
    broker: SimBroker, clock: MarketTime
) -> None:
    accepted = broker.submit(buy("o-1", 10))
    assert accepted.status is OrderStatus.ACCEPTED and accepted.filled_qty == 0
    assert broker.snapshot().open_orders == (accepted,)
    clock.to(101)
    filled = broker.lookup("o-1")
    fill_price, _ = bar("SPY", 101)
    assert filled is not None and filled.status is OrderStatus.FILLED
    assert (filled.filled_qty, filled.filled_avg_price) == (10, fill_price)
    assert filled.broker_order_id == accepted.broker_order_id
    snap = broker.snapshot()
    assert snap.positions == {"SPY": Position("SPY", 10, fill_price)}
    assert snap.cash == pytest.approx(100_000 - 10 * fill_price)
    assert snap.open_orders == ()


def test_an_order_does_not_fill_until_its_next_bar_has_closed(
    broker: SimBroker, clock: MarketTime
) -> None:
    broker.submit(buy("o-1", 1))
    clock.t = at(100) + MINUTE / 2
    assert broker.snapshot().open_orders[0].status is OrderStatus.ACCEPTED


def test_a_late_look_fills_at_the_first_bar_after_submission_not_the_latest(
    broker: SimBroker, clock: MarketTime
) -> None:
    broker.submit(buy("o-1", 1))
    clock.to(150)
    outcome = broker.lookup("o-1")
    assert outcome is not None and outcome.filled_avg_price == bar("SPY", 101)[0]


def test_resubmitting_a_known_id_returns_that_order_and_places_no_other(
    broker: SimBroker, clock: MarketTime
) -> None:
    first = broker.submit(buy("o-1", 10))
    assert broker.submit(buy("o-1", 10)) == first
    clock.to(101)
    again = broker.submit(buy("o-1", 10))
    assert again.status is OrderStatus.FILLED and again.broker_order_id == first.broker_order_id
    assert broker.snapshot().qty("SPY") == 10


def test_an_unknown_id_looks_up_as_none(broker: SimBroker) -> None:
    assert broker.lookup("never-sent") is None


def test_selling_more_than_is_held_is_rejected_and_stays_rejected(
    broker: SimBroker, clock: MarketTime
) -> None:
    broker.submit(buy("b-1", 5))
    clock.to(101)
    rejected = broker.submit(sell("s-1", 6))
    assert rejected.status is OrderStatus.REJECTED
    assert rejected.reason is not None and "insufficient qty" in rejected.reason
    assert "only 5" in rejected.reason
    assert broker.submit(sell("s-1", 1)).status is OrderStatus.REJECTED  # same id: same answer
    assert broker.submit(sell("s-2", 5)).status is OrderStatus.ACCEPTED


def test_open_sells_count_against_the_sellable_qty(broker: SimBroker, clock: MarketTime) -> None:
    broker.submit(buy("b-1", 5))
    clock.to(101)
    assert broker.submit(sell("s-1", 3)).status is OrderStatus.ACCEPTED
    assert broker.submit(sell("s-2", 3)).status is OrderStatus.REJECTED


def test_an_order_placed_through_another_connection_counts_against_buying_power(
    tmp_path: Path, clock: MarketTime
) -> None:
    """The broker checks orders against its view of the account, kept current by its own
    writes; a write to the same file by another broker (a restarted worker's, a tool's)
    is seen at the next call, never decided against stale figures."""
    first = SimBroker(tmp_path / "broker.db", MARKET, clock)
    _, close = bar("SPY", 100)
    affordable = int(100_000 // close)
    assert first.submit(buy("b-0", 1)).status is OrderStatus.ACCEPTED  # the view is read
    other = SimBroker(tmp_path / "broker.db", MARKET, clock)
    assert other.submit(buy("b-other", affordable - 2)).status is OrderStatus.ACCEPTED
    refused = first.submit(buy("b-late", 2))
    assert refused.status is OrderStatus.REJECTED
    assert refused.reason is not None and "insufficient buying power" in refused.reason
    assert first.submit(buy("b-fits", 1)).status is OrderStatus.ACCEPTED
    first.close()
    other.close()


def test_a_cancelled_order_never_fills(broker: SimBroker, clock: MarketTime) -> None:
    placed = broker.submit(buy("b-1", 5))
    broker.cancel(placed.broker_order_id)
    clock.to(105)
    assert broker.snapshot().positions == {}
    assert broker.snapshot().cash == 100_000
    held = broker.lookup("b-1")
    assert held is not None and held.status is not OrderStatus.FILLED
    assert broker.submit(sell("s-1", 5)).status is OrderStatus.REJECTED  # nothing to sell


def test_a_buy_costing_more_than_cash_is_rejected(broker: SimBroker) -> None:
    _, close = bar("SPY", 100)
    affordable = int(100_000 // close)
    rejected = broker.submit(buy("b-big", affordable + 1))
    assert rejected.status is OrderStatus.REJECTED
    assert rejected.reason is not None and "insufficient buying power" in rejected.reason
    assert broker.submit(buy("b-ok", affordable)).status is OrderStatus.ACCEPTED
    assert broker.submit(buy("b-more", 1)).status is OrderStatus.REJECTED  # cash is reserved


def test_buying_power_is_priced_at_the_latest_close_of_the_bar_in_hand(
    broker: SimBroker, clock: MarketTime
) -> None:
    """Prices are read once per bar (one update's orders share them), never carried to the
    next: at each bar the most that can be bought is what that bar's close affords."""
    for n in (100, 130):  # far enough apart that SPY's close differs
        clock.to(n)
        most = int(broker.snapshot().cash // bar("SPY", n)[1])
        assert broker.submit(buy(f"b-{n}-over", most + 1)).status is OrderStatus.REJECTED
        assert broker.submit(buy(f"b-{n}", most // 2)).status is OrderStatus.ACCEPTED
        # it fills at bar n + 1's open, before the next turn reads the cash
    assert bar("SPY", 100)[1] != bar("SPY", 130)[1]


def test_an_order_for_a_symbol_without_a_price_yet_is_rejected(tmp_path: Path) -> None:
    early = SimBroker(tmp_path / "b.db", MARKET, lambda: at(-1))
    outcome = early.submit(buy("b-1", 1))
    assert outcome.status is OrderStatus.REJECTED
    assert outcome.reason is not None and outcome.reason.startswith("no price for SPY")


def test_shorting_is_allowed_when_configured(tmp_path: Path, clock: MarketTime) -> None:
    broker = SimBroker(tmp_path / "b.db", MARKET, clock, allow_short=True)
    assert broker.submit(sell("s-1", 4)).status is OrderStatus.ACCEPTED
    clock.to(101)
    snap = broker.snapshot()
    assert snap.positions["SPY"] == Position("SPY", -4, bar("SPY", 101)[0])
    assert snap.cash == pytest.approx(100_000 + 4 * bar("SPY", 101)[0])


def test_equity_is_cash_plus_positions_at_the_latest_close(
    broker: SimBroker, clock: MarketTime
) -> None:
    broker.submit(buy("b-1", 10))
    broker.submit(buy("q-1", 20, symbol="QQQ"))
    clock.to(120)
    snap = broker.snapshot()
    spy_paid, qqq_paid = bar("SPY", 101)[0], bar("QQQ", 101)[0]
    assert snap.cash == pytest.approx(100_000 - 10 * spy_paid - 20 * qqq_paid)
    marks = 10 * bar("SPY", 120)[1] + 20 * bar("QQQ", 120)[1]
    assert snap.equity == pytest.approx(snap.cash + marks)


def test_buys_average_the_entry_price_and_a_full_sell_flattens(
    broker: SimBroker, clock: MarketTime
) -> None:
    broker.submit(buy("b-1", 10))
    clock.to(101)
    broker.submit(buy("b-2", 30))
    clock.to(102)
    p1, p2 = bar("SPY", 101)[0], bar("SPY", 102)[0]
    assert broker.snapshot().positions["SPY"].avg_entry_price == pytest.approx(
        (10 * p1 + 30 * p2) / 40
    )
    broker.submit(sell("s-1", 40))
    clock.to(103)
    snap = broker.snapshot()
    assert snap.positions == {}
    assert snap.cash == pytest.approx(100_000 - 10 * p1 - 30 * p2 + 40 * bar("SPY", 103)[0])
    assert snap.equity == pytest.approx(snap.cash)


@pytest.mark.parametrize(
    ("held", "delta", "price", "expected"),
    [
        (None, 10, 5.0, Position("X", 10, 5.0)),
        (Position("X", 10, 5.0), 10, 7.0, Position("X", 20, 6.0)),
        (Position("X", 10, 5.0), -4, 9.0, Position("X", 6, 5.0)),
        (Position("X", 10, 5.0), -10, 9.0, None),
        (Position("X", 10, 5.0), -15, 9.0, Position("X", -5, 9.0)),
        (Position("X", -10, 5.0), -10, 8.0, Position("X", -20, 6.5)),
        (Position("X", -10, 5.0), 4, 8.0, Position("X", -6, 5.0)),
    ],
)
def test_next_position_averages_in_keeps_when_reducing_and_resets_on_a_flip(
    held: Position | None, delta: float, price: float, expected: Position | None
) -> None:
    assert next_position("X", held, delta, price) == expected


def test_the_account_survives_close_and_reopen(tmp_path: Path, clock: MarketTime) -> None:
    path = tmp_path / "broker.db"
    first = SimBroker(path, MARKET, clock)
    accepted = first.submit(buy("o-1", 10))
    first.close()
    clock.to(101)
    reopened = SimBroker(path, MARKET, clock, starting_cash=1.0)  # existing account wins
    assert reopened.submit(buy("o-1", 10)).broker_order_id == accepted.broker_order_id
    snap = reopened.snapshot()
    assert snap.qty("SPY") == 10
    assert snap.cash == pytest.approx(100_000 - 10 * bar("SPY", 101)[0])


def test_the_account_survives_a_worker_killed_without_closing(
    tmp_path: Path, clock: MarketTime
) -> None:
    path = tmp_path / "broker.db"
    crashing_worker = textwrap.dedent(f"""
        import os
        from datetime import datetime
        from service.broker.sim import SimBroker
        from service.market.synthetic import SyntheticMarket
        from service.settings import SyntheticMarketSettings
        from service.types import OrderIntent, Side
        now = datetime.fromisoformat({at(100).isoformat()!r})
        broker = SimBroker({str(path)!r}, SyntheticMarket(SyntheticMarketSettings(seed=3)),
                           lambda: now)
        broker.submit(OrderIntent("o-1", "SPY", Side.BUY, 7))
        os._exit(9)
    """)
    done = subprocess.run([sys.executable, "-c", crashing_worker], timeout=60, check=False,
                          capture_output=True, text=True)
    assert done.returncode == 9, done.stderr
    clock.to(101)
    broker = SimBroker(path, MARKET, clock)
    outcome = broker.lookup("o-1")
    assert outcome is not None and outcome.status is OrderStatus.FILLED
    assert outcome.filled_avg_price == bar("SPY", 101)[0]
    assert broker.snapshot().qty("SPY") == 7


def test_fills_are_recorded_one_row_per_order(tmp_path: Path, clock: MarketTime) -> None:
    path = tmp_path / "broker.db"
    broker = SimBroker(path, MARKET, clock)
    broker.submit(buy("b-1", 2))
    broker.submit(buy("b-2", 3))
    clock.to(105)
    broker.snapshot()
    broker.snapshot()
    broker.close()
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT qty, price, bar_time FROM fills ORDER BY seq").fetchall()
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
    open_101 = bar("SPY", 101)[0]
    assert rows == [(2.0, open_101, at(101).isoformat()), (3.0, open_101, at(101).isoformat())]
    assert mode == "wal"


def test_identical_histories_give_identical_broker_files(
    tmp_path: Path, clock: MarketTime
) -> None:
    brokers = [SimBroker(tmp_path / f"{name}.db", MARKET, clock) for name in ("a", "b")]
    for broker in brokers:
        broker.submit(buy("b-1", 1))
    clock.to(101)
    for broker in brokers:
        broker.submit(sell("s-1", 5))
        broker.close()
    dumps = []
    for name in ("a", "b"):
        with sqlite3.connect(tmp_path / f"{name}.db") as db:
            dumps.append(list(db.iterdump()))
    assert dumps[0] == dumps[1]
