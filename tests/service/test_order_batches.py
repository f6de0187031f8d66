"""An update's orders reach a broker that takes them as one step (BatchBroker: the
simulated broker) in one call; a broker of one request per order (Alpaca) gets them one
by one, a stop asked before each. Either way each order is sent once, a stop asked before
the POST sends nothing, and an answer lost to a crash is found again, never resent."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import pytest
from structlog.testing import capture_logs
from test_broker_sim import MARKET, MarketTime, buy, sell

from service.broker.base import PlacedOrder
from service.broker.sim import SimBroker
from service.broker.sim_book_rows import book_rows
from service.state.records import IntentRecord
from service.types import BrokerSnapshot, OrderIntent, OrderOutcome, OrderStatus
from service.worker.fault_points import FaultPoints, InjectedFailure
from service.worker.order_submission import OrderSubmitter

INTENTS = [buy("rt-a-1-SPY", 5), buy("rt-a-1-QQQ", 3, symbol="QQQ"), sell("rt-a-1-IWM", 2,
                                                                           symbol="IWM")]


class PerOrder:
    """The simulated broker seen through the Broker protocol alone: one call per order."""

    def __init__(self, inner: SimBroker) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def snapshot(self) -> BrokerSnapshot:
        return self.inner.snapshot()

    def submit(self, intent: OrderIntent) -> OrderOutcome:
        self.calls.append(f"submit {intent.client_order_id}")
        return self.inner.submit(intent)

    def lookup(self, client_order_id: str) -> OrderOutcome | None:
        self.calls.append(f"lookup {client_order_id}")
        return self.inner.lookup(client_order_id)

    def recent_orders(self, since: datetime) -> tuple[PlacedOrder, ...]:
        return self.inner.recent_orders(since)

    def cancel(self, broker_order_id: str) -> None:
        self.inner.cancel(broker_order_id)

    def market_open(self) -> bool:
        return True

    def close(self) -> None:
        self.inner.close()


class Batched(PerOrder):
    def submit_many(self, intents: Sequence[OrderIntent]) -> list[OrderOutcome]:
        self.calls.append(f"submit_many {len(intents)}")
        return self.inner.submit_many(intents)

    def lookup_many(self, client_order_ids: Sequence[str]) -> list[OrderOutcome | None]:
        self.calls.append(f"lookup_many {len(client_order_ids)}")
        return self.inner.lookup_many(client_order_ids)


class Intents:
    """The state database's side: the intents of one checkpoint, pending until recorded."""

    def __init__(self, intents: list[OrderIntent]) -> None:
        self.status = {i.client_order_id: OrderStatus.PENDING for i in intents}
        self.intents = intents
        self.recorded: list[OrderOutcome] = []

    def open_intents(self) -> list[IntentRecord]:
        return [IntentRecord(i, 1, self.status[i.client_order_id]) for i in self.intents
                if not self.status[i.client_order_id].is_final]

    def record_outcomes(self, outcomes: list[OrderOutcome]) -> None:
        self.recorded.extend(outcomes)
        self.status.update((o.client_order_id, o.status) for o in outcomes)


class Passes(FaultPoints):
    """Fault points that only note each pass (and fail where told)."""

    def __init__(self, fail_at: str | None = None) -> None:
        super().__init__()
        self.passed: list[str] = []
        self.fail_at = fail_at

    def hit(self, point: str) -> None:
        self.passed.append(point)
        if point == self.fail_at:
            raise InjectedFailure(f"disk I/O error (injected at {point})")


@pytest.fixture
def sim(tmp_path: Path) -> SimBroker:
    return SimBroker(tmp_path / "broker.db", MARKET, MarketTime(100))


def submitter(broker: PerOrder, store: Intents, faults: FaultPoints,
              stop: bool = False) -> OrderSubmitter:
    return OrderSubmitter(broker, store, faults, lambda: stop)  # type: ignore[arg-type]


def test_a_batch_broker_gets_the_update_s_orders_in_one_call(
    sim: SimBroker, tmp_path: Path
) -> None:
    broker, store, faults = Batched(sim), Intents(INTENTS), Passes()
    single = SimBroker(tmp_path / "single.db", MARKET, MarketTime(100))
    one_by_one = [single.submit(i) for i in INTENTS]  # the IWM sale: nothing held
    with capture_logs() as logs:
        submitter(broker, store, faults).send_all(INTENTS, 1)
    assert broker.calls == ["submit_many 3"]
    assert faults.passed == ["before_post", "after_post"]
    assert [o.status for o in store.recorded] == [o.status for o in one_by_one]
    assert [(e["event"], e["client_order_id"]) for e in logs] == [
        *(("order.submitted", i.client_order_id) for i in INTENTS),
        *(("order.resolved", i.client_order_id) for i in INTENTS)]


def test_a_broker_of_one_request_per_order_is_asked_one_order_at_a_time(
    sim: SimBroker,
) -> None:
    broker, store, faults = PerOrder(sim), Intents(INTENTS), Passes()
    submitter(broker, store, faults).send_all(INTENTS, 1)
    assert broker.calls == [f"submit {i.client_order_id}" for i in INTENTS]
    assert faults.passed == ["before_post", "after_post"] * 3


@pytest.mark.parametrize("kind", [Batched, PerOrder])
def test_a_stop_asked_before_the_orders_sends_none(
    sim: SimBroker, tmp_path: Path, kind: type[PerOrder]
) -> None:
    broker, store = kind(sim), Intents(INTENTS)
    with capture_logs() as logs:
        submitter(broker, store, Passes(), stop=True).send_all(INTENTS, 1)
    assert broker.calls == [] and store.recorded == []
    [deferred] = [e for e in logs if e["event"] == "orders.deferred"]
    assert deferred["count"] == 3 and not [e for e in logs if e["event"] == "order.submitted"]
    assert book_rows(tmp_path / "broker.db")["orders"] == []


def test_a_crash_between_the_batch_and_its_record_is_found_again_not_resent(
    sim: SimBroker, tmp_path: Path
) -> None:
    broker, store = Batched(sim), Intents(INTENTS)
    with pytest.raises(InjectedFailure):
        submitter(broker, store, Passes(fail_at="after_post")).send_all(INTENTS, 1)
    assert store.recorded == []  # the answers were lost with the process
    broker.calls.clear()
    submitter(broker, store, Passes()).resolve_open_intents()
    assert broker.calls == ["lookup_many 3"]  # found, so nothing is sent again
    assert [o.status for o in store.recorded] == [OrderStatus.ACCEPTED, OrderStatus.ACCEPTED,
                                                  OrderStatus.REJECTED]
    ids = sorted(row[0] for row in book_rows(tmp_path / "broker.db")["orders"])
    assert ids == sorted(i.client_order_id for i in INTENTS)  # each once


def test_resolution_asks_a_batch_broker_once_and_sends_only_what_it_never_saw(
    sim: SimBroker,
) -> None:
    broker, store = Batched(sim), Intents(INTENTS)
    sim.submit_many(INTENTS[:2])  # the third never reached the broker
    submitter(broker, store, Passes()).resolve_open_intents()
    assert broker.calls == ["lookup_many 3", f"submit {INTENTS[2].client_order_id}"]
    assert [o.client_order_id for o in store.recorded] == [i.client_order_id for i in INTENTS]


def test_a_stop_asked_before_resolution_reaches_no_broker(sim: SimBroker) -> None:
    broker, store = Batched(sim), Intents(INTENTS)
    submitter(broker, store, Passes(), stop=True).resolve_open_intents()
    assert broker.calls == [] and store.recorded == []
