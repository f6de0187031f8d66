"""The simulated broker takes an update's orders in one call (submit_many) and answers an
update's lookups in one (lookup_many): each order is accepted or refused exactly as one
`submit` after another would, the batch reaches the file whole or not at all, and an id
the broker holds is answered, never placed twice. Its snapshot, kept in memory, is the
account the file holds."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_broker_sim import MARKET, MarketTime, bar, buy, sell

from service.broker.base import BatchBroker
from service.broker.sim import SimBroker
from service.broker.sim_account import SimAccount
from service.broker.sim_book_rows import book_rows
from service.broker.sim_prices import OpenBuyCost
from service.types import OrderIntent, OrderOutcome, OrderStatus

ACCEPTED, REJECTED, FILLED = OrderStatus.ACCEPTED, OrderStatus.REJECTED, OrderStatus.FILLED


@pytest.fixture
def clock() -> MarketTime:
    return MarketTime(100)


def one_by_one(broker: SimBroker, intents: list[OrderIntent]) -> list[OrderOutcome]:
    return [broker.submit(intent) for intent in intents]


def affordable(n: int, symbol: str = "SPY", cash: float = 100_000.0) -> int:
    return int(cash // bar(symbol, n)[1])


def test_the_simulated_broker_is_a_batch_broker(tmp_path: Path, clock: MarketTime) -> None:
    assert isinstance(SimBroker(tmp_path / "b.db", MARKET, clock), BatchBroker)


def test_a_batch_is_accepted_and_refused_as_one_submit_after_another(
    tmp_path: Path, clock: MarketTime
) -> None:
    """Each order is checked against the account the ones before it left: a buy that the
    earlier buys leave no cash for is refused, a later one that fits is accepted."""
    half = affordable(100) // 2
    first = [buy("b-1", half), buy("b-2", half + 2), sell("s-1", 1), buy("b-3", 1),
             buy("q-1", 3, symbol="QQQ"), buy("b-1", half)]  # b-1 again: that order
    second = [sell("s-2", half - 1), sell("s-3", 2), buy("b-4", half), buy("b-5", half // 2)]
    batched = SimBroker(tmp_path / "batched.db", MARKET, clock)
    single = SimBroker(tmp_path / "single.db", MARKET, clock)

    outcomes = batched.submit_many(first)
    assert outcomes == one_by_one(single, first)
    assert [o.status for o in outcomes] == [ACCEPTED, REJECTED, REJECTED, ACCEPTED, ACCEPTED,
                                            ACCEPTED]
    assert outcomes[1].reason is not None and "insufficient buying power" in outcomes[1].reason
    assert outcomes[2].reason is not None and "insufficient qty" in outcomes[2].reason
    assert outcomes[5] == outcomes[0]
    clock.to(101)  # the buys fill; the sells below are checked against what they left
    assert batched.submit_many(second) == one_by_one(single, second)
    batched.close()
    single.close()
    assert book_rows(tmp_path / "batched.db") == book_rows(tmp_path / "single.db")


def test_a_batch_sent_twice_places_each_order_once(tmp_path: Path, clock: MarketTime) -> None:
    path = tmp_path / "b.db"
    batch = [buy("b-1", 5), sell("s-1", 5), buy("q-1", 7, symbol="QQQ")]
    broker = SimBroker(path, MARKET, clock)
    placed = broker.submit_many(batch)
    assert broker.submit_many(batch) == placed
    broker.close()
    clock.to(101)
    reopened = SimBroker(path, MARKET, clock)  # a restarted worker sends the batch again
    again = reopened.submit_many([*batch, buy("b-2", 1)])
    assert [o.status for o in again] == [FILLED, REJECTED, FILLED, ACCEPTED]
    assert [o.broker_order_id for o in again[:3]] == [o.broker_order_id for o in placed]
    reopened.close()
    ids = [row[0] for row in book_rows(path)["orders"]]
    assert sorted(ids) == ["b-1", "b-2", "q-1", "s-1"]


def test_a_batch_the_file_refuses_places_nothing_and_holds_no_cash(
    tmp_path: Path, clock: MarketTime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails (disk full) leaves none of the batch in the file, and none of it
    counts against buying power afterwards: the same batch is accepted once it can be."""
    path = tmp_path / "b.db"
    broker = SimBroker(path, MARKET, clock)
    most = affordable(100)

    def disk_full(self: SimAccount, orders: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(SimAccount, "add_orders", disk_full)
    with pytest.raises(sqlite3.OperationalError):
        broker.submit_many([buy("b-1", most), buy("q-1", 1, symbol="QQQ")])
    monkeypatch.undo()
    assert book_rows(path)["orders"] == []
    assert broker.lookup_many(["b-1", "q-1"]) == [None, None]
    assert [o.status for o in broker.submit_many([buy("b-1", most)])] == [ACCEPTED]
    broker.close()


def test_lookup_many_answers_as_lookup(tmp_path: Path, clock: MarketTime) -> None:
    path = tmp_path / "b.db"
    broker = SimBroker(path, MARKET, clock)
    broker.submit_many([buy("b-1", 5), sell("s-1", 5)])
    clock.to(101)
    broker.submit_many([buy("b-2", 1)])
    ids = ["b-2", "never-sent", "b-1", "s-1"]
    found = broker.lookup_many(ids)
    assert found == [broker.lookup(cid) for cid in ids]
    assert [o.status if o else None for o in found] == [ACCEPTED, None, FILLED, REJECTED]
    broker.close()
    reopened = SimBroker(path, MARKET, clock)  # the same answers from the file alone
    assert reopened.lookup_many(ids) == found
    reopened.close()


def test_the_snapshot_is_the_account_the_file_holds(tmp_path: Path, clock: MarketTime) -> None:
    """Cash, positions (in the file's order), open orders and equity, as a broker that
    has just read the file sees them, through buys, a partial sale, a close, a flip."""
    path = tmp_path / "b.db"
    broker = SimBroker(path, MARKET, clock, allow_short=True)
    steps = [[buy("b-1", 10), buy("q-1", 4, symbol="QQQ"), buy("i-1", 3, symbol="IWM")],
             [sell("b-2", 4), sell("q-2", 4, symbol="QQQ")],
             [buy("q-3", 2, symbol="QQQ"), sell("i-2", 5, symbol="IWM")],
             [buy("b-3", 1)]]
    for n, batch in enumerate(steps, start=101):
        broker.submit_many(batch)
        clock.to(n)
        kept = broker.snapshot()
        fresh = SimBroker(path, MARKET, clock, allow_short=True)
        read = fresh.snapshot()
        fresh.close()
        assert kept == read
        assert list(kept.positions) == list(read.positions)
    assert broker.snapshot().qty("IWM") == -2 and broker.snapshot().qty("QQQ") == 2
    broker.close()


def test_an_order_placed_by_another_connection_is_in_the_next_snapshot(
    tmp_path: Path, clock: MarketTime
) -> None:
    path = tmp_path / "b.db"
    first, other = SimBroker(path, MARKET, clock), SimBroker(path, MARKET, clock)
    assert first.snapshot().open_orders == ()
    [placed] = other.submit_many([buy("b-1", 2)])
    assert first.snapshot().open_orders == (placed,)
    first.close()
    other.close()


SYMBOLS = st.sampled_from(["AAA", "BBB", "CCC", "DDD", "EEE"])
QTYS = st.floats(min_value=1e-3, max_value=1e4, allow_nan=False)
CLOSES = st.floats(min_value=1e-3, max_value=1e5, allow_nan=False)


@given(st.dictionaries(SYMBOLS, QTYS), st.dictionaries(SYMBOLS, CLOSES),
       st.lists(st.tuples(SYMBOLS, QTYS, CLOSES), max_size=12))
def test_the_open_buys_cost_is_the_sum_afresh_bit_for_bit(
    start: dict[str, float], marks: dict[str, float],
    changes: list[tuple[str, float, float]],
) -> None:
    """Kept as buys are accepted, the cost is the float that summing every open buy
    again (per symbol in symbol order, left to right) gives: a check at the edge of the
    buying power is decided the same either way."""
    cost = OpenBuyCost(sorted(start.items()), marks)
    held, prices = dict(start), dict(marks)
    assert cost.total == float(sum(q * prices.get(s, 0.0) for s, q in sorted(held.items())))
    for symbol, qty, close in changes:
        held[symbol], prices[symbol] = qty, close
        cost.set(symbol, qty, close)
        afresh = float(sum(q * prices.get(s, 0.0) for s, q in sorted(held.items())))
        assert cost.total == afresh and not math.copysign(1.0, cost.total) < 0
