"""Issue 17: the account's recent orders (GET /v2/orders, status=all, after, newest first),
through alpaca-py's real HTTP code against the local server, paged past Alpaca's 500."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import structlog
from alpaca_server import AlpacaServer
from alpaca_server.book import NEW_YORK, START, Order
from alpaca_server.clients import broker_for, market_for

from service.alpaca import broker as alpaca_broker
from service.alpaca.mapping import placed_from_alpaca, placed_to_alpaca
from service.broker.base import BrokerAuthError, BrokerError, PlacedOrder
from service.broker.sim import SimBroker
from service.market.synthetic import SyntheticMarket
from service.settings import SyntheticMarketSettings
from service.types import OrderIntent, Side

T = datetime(2026, 12, 1, 15, 0, tzinfo=UTC)  # when the listed orders were placed, about
S = timedelta(seconds=1)
ROUTE = "GET /v2/orders"


def place(server: AlpacaServer, cid: str, at: datetime, status: str = "filled") -> None:
    """An order the server holds, taken at `at` by the wall clock."""
    server.account.orders[cid] = Order(str(uuid.uuid4()), cid, "SPY", "buy", 1.0, START,
                                       status=status, placed_at=at)


@pytest.mark.parametrize("zone", [None, NEW_YORK], ids=["utc", "new-york"])
def test_recent_orders_of_any_status_after_a_time_newest_first(
    alpaca_server: AlpacaServer, zone: ZoneInfo | None
) -> None:
    alpaca_server.order_zone = zone
    for n, status in enumerate(["filled", "new", "canceled", "rejected", "quantum_held"]):
        place(alpaca_server, f"rt-1abcde-alpha-{n + 1}-SPY", T + n * S, status)
    place(alpaca_server, "rt-1abcde-alpha-9-QQQ", T - 10 * S)
    found = broker_for(alpaca_server).recent_orders(T)  # after: exclusive, as Alpaca's
    assert [o.client_order_id for o in found] == [f"rt-1abcde-alpha-{n}-SPY" for n in
                                                 (5, 4, 3, 2)]
    assert [o.submitted_at for o in found] == [T + n * S for n in (4, 3, 2, 1)]
    assert all(o.submitted_at.tzinfo == UTC and o.symbol == "SPY" for o in found)
    assert alpaca_server.requests == [ROUTE]


def test_the_times_alpaca_sends_are_read_in_every_form(alpaca_server: AlpacaServer) -> None:
    market_for(alpaca_server).history(["SPY"], START + timedelta(minutes=100), 1)
    alpaca_server.order_zone = NEW_YORK
    before = datetime.now(UTC)
    broker = broker_for(alpaca_server)
    broker.submit(OrderIntent("rt-1abcde-alpha-1-SPY", "SPY", Side.BUY, 1.0))
    [placed] = broker.recent_orders(before - S)
    stamp = alpaca_server.account.orders["rt-1abcde-alpha-1-SPY"].json(NEW_YORK)["submitted_at"]
    assert stamp[-6:] in ("-05:00", "-04:00") and len(stamp.split(".")[1]) == 9 + 6, stamp
    assert before <= placed.submitted_at <= datetime.now(UTC)


def test_pages_past_alpacas_500_keep_every_order_once(alpaca_server: AlpacaServer) -> None:
    for n in range(620):  # 12 orders share each second: some straddle the page boundary
        place(alpaca_server, f"rt-1abcde-alpha-{n + 1}-SPY", T + (n // 12) * S)
    found = broker_for(alpaca_server).recent_orders(T - S)
    assert len(found) == 620 and len({o.client_order_id for o in found}) == 620
    assert [o.submitted_at for o in found] == sorted((o.submitted_at for o in found),
                                                     reverse=True)
    assert alpaca_server.requests == [ROUTE, ROUTE]


def test_the_listing_is_bounded_to_the_newest_pages(
    alpaca_server: AlpacaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(alpaca_broker, "ORDERS_PAGE", 4)
    monkeypatch.setattr(alpaca_broker, "ORDERS_PAGES", 3)
    for n in range(20):
        place(alpaca_server, f"rt-1abcde-alpha-{n + 1}-SPY", T + n * S)
    found = broker_for(alpaca_server).recent_orders(T - S)
    # each next page ends just after the oldest seen, which it lists again: 4 + 3 + 3
    assert [o.submitted_at for o in found] == [T + n * S for n in range(19, 9, -1)]
    assert alpaca_server.requests == [ROUTE] * 3


def test_a_page_of_orders_sharing_one_time_ends_the_listing(
    alpaca_server: AlpacaServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(alpaca_broker, "ORDERS_PAGE", 4)
    for n in range(6):
        place(alpaca_server, f"rt-1abcde-alpha-{n + 1}-SPY", T)
    found = broker_for(alpaca_server).recent_orders(T - S)
    assert len(found) == 4, "the next page repeats them: nothing new, so it stops"
    assert alpaca_server.requests == [ROUTE] * 2


def test_a_transient_fault_is_retried_and_a_lasting_one_raises(
    alpaca_server: AlpacaServer,
) -> None:
    place(alpaca_server, "rt-1abcde-alpha-1-SPY", T)
    alpaca_server.faults.queue(ROUTE, "503", "drop", "stall")
    with structlog.testing.capture_logs() as logs:
        found = broker_for(alpaca_server).recent_orders(T - S)
    assert [o.client_order_id for o in found] == ["rt-1abcde-alpha-1-SPY"]
    assert [e["event"] for e in logs] == ["alpaca.retry"] * 3
    alpaca_server.faults.queue(ROUTE, *["504"] * 4)
    with pytest.raises(BrokerError, match="HTTP 504"):
        broker_for(alpaca_server).recent_orders(T - S)
    alpaca_server.faults.queue(ROUTE, "echo_401")
    with pytest.raises(BrokerAuthError):
        broker_for(alpaca_server).recent_orders(T - S)


def test_a_placed_order_maps_both_ways() -> None:
    placed = PlacedOrder("rt-1abcde-alpha-1-SPY", T + timedelta(microseconds=7), "SPY")
    assert placed_from_alpaca(placed_to_alpaca(placed)) == placed
    ny = {"id": "x", "client_order_id": "c", "submitted_at": None,
          "created_at": "2026-12-01T10:00:00.123456789-05:00"}
    assert placed_from_alpaca(ny).submitted_at == T + timedelta(microseconds=123456)


def test_the_simulated_broker_lists_its_orders_by_market_time(tmp_path: Path) -> None:
    now = [START + timedelta(minutes=200)]
    market = SyntheticMarket(SyntheticMarketSettings(seed=11, start=START))
    broker = SimBroker(tmp_path / "broker.sqlite", market, lambda: now[0])
    try:
        for n, step in enumerate([0, 1, 1, 2]):
            now[0] += timedelta(minutes=step)
            broker.submit(OrderIntent(f"rt-1abcde-alpha-{n + 1}-SPY", "SPY", Side.BUY, 1.0))
        found = broker.recent_orders(START + timedelta(minutes=200))
    finally:
        broker.close()
    assert [o.client_order_id for o in found] == [f"rt-1abcde-alpha-{n}-SPY" for n in
                                                 (4, 3, 2)]
    assert [o.submitted_at for o in found] == [START + timedelta(minutes=m) for m in
                                               (204, 202, 201)]
