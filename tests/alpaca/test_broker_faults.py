"""The Alpaca adapter through alpaca-py's real HTTP code against the local server: every
injected fault ends with the order accepted exactly once, or honestly UNKNOWN."""

from __future__ import annotations

from datetime import timedelta

import pytest
import structlog
from alpaca_server import AlpacaServer
from alpaca_server.book import START
from alpaca_server.clients import broker_for, client_for, market_for

from service.alpaca.client import AlpacaHttpError
from service.types import OrderIntent, OrderStatus, Side

POST = "POST /v2/orders"
NOW = START + timedelta(minutes=100)


def buy(cid: str, qty: float = 5.0, symbol: str = "SPY") -> OrderIntent:
    return OrderIntent(cid, symbol, Side.BUY, qty)


@pytest.fixture
def priced(alpaca_server: AlpacaServer) -> AlpacaServer:
    market_for(alpaca_server).history(["SPY", "QQQ"], NOW, 1)  # market time at NOW
    return alpaca_server


@pytest.mark.parametrize(
    "fault",
    ["504_after_accept", "422_after_accept", "stall", "drop_after_accept",
     "429", "500", "502", "503", "504", "drop"],
)
def test_an_ambiguous_answer_is_resolved_by_lookup_and_the_order_exists_once(
    priced: AlpacaServer, fault: str
) -> None:
    priced.faults.queue(POST, fault)
    with structlog.testing.capture_logs() as logs:
        outcome = broker_for(priced).submit(buy("rt-a-1-SPY"))
    assert outcome.status == OrderStatus.ACCEPTED
    assert priced.account.accepted == {"rt-a-1-SPY": 1}
    [unknown] = [e for e in logs if e["event"] == "order.unknown"]
    assert unknown["client_order_id"] == "rt-a-1-SPY"
    after_accept = fault.endswith("after_accept") or fault == "stall"
    followup = "order.adopted" if after_accept else "order.resending"
    assert [e for e in logs if e["event"] == followup]


def test_the_trap_alpaca_py_retry_422_on_an_accepted_order_is_not_a_rejection(
    priced: AlpacaServer,
) -> None:
    """ALPACA.md: 504 after accept, then alpaca-py's own retry sees 422 'must be unique'."""
    priced.faults.queue(POST, "422_after_accept")
    outcome = broker_for(priced).submit(buy("rt-a-2-SPY"))
    assert outcome.status == OrderStatus.ACCEPTED and outcome.broker_order_id


def test_an_explicit_refusal_is_a_rejection_and_is_not_resent(priced: AlpacaServer) -> None:
    outcome = broker_for(priced).submit(buy("rt-a-3-SPY", qty=1_000_000))
    assert outcome.status == OrderStatus.REJECTED
    assert "insufficient buying power" in (outcome.reason or "")
    assert priced.posts == [("rt-a-3-SPY", "403 insufficient buying power")]


def test_a_wash_trade_is_rejected_and_cancelling_the_working_order_clears_it(
    priced: AlpacaServer,
) -> None:
    broker = broker_for(priced)
    first = broker.submit(buy("rt-a-4-QQQ", symbol="QQQ"))
    sell = OrderIntent("rt-a-5-QQQ", "QQQ", Side.SELL, 1.0)
    assert broker.submit(sell).status == OrderStatus.REJECTED
    assert first.broker_order_id is not None
    broker.cancel(first.broker_order_id)
    broker.cancel(first.broker_order_id)  # already canceled: skipped, not an error
    assert broker.lookup("rt-a-4-QQQ").status == OrderStatus.CANCELED  # type: ignore[union-attr]


def test_when_the_broker_stays_unreachable_the_order_stays_unknown(priced: AlpacaServer) -> None:
    priced.faults.queue(POST, "504_after_accept")
    priced.faults.queue("GET /v2/orders:by_client_order_id", *["503"] * 4)
    outcome = broker_for(priced).submit(buy("rt-a-6-SPY"))
    assert outcome.status == OrderStatus.UNKNOWN
    assert broker_for(priced).lookup("rt-a-6-SPY").status == OrderStatus.ACCEPTED  # type: ignore[union-attr]


def test_reads_retry_through_faults_and_give_up_with_a_clear_error(priced: AlpacaServer) -> None:
    priced.faults.queue("GET /v2/account", "500", "stall", "drop")
    assert broker_for(priced).snapshot().cash == 100_000.0
    priced.faults.queue("GET /v2/account", *["502"] * 4)
    with pytest.raises(AlpacaHttpError, match="GET /v2/account: HTTP 502"):
        client_for(priced).account()


def test_a_429_is_honoured_until_its_reset(priced: AlpacaServer) -> None:
    priced.reset_in_s = 1.0
    priced.faults.queue("GET /v2/account", "429")
    client = client_for(priced)
    client.account()
    assert priced.requests.count("GET /v2/account") == 2


def test_bad_keys_are_refused_without_the_keys_in_the_error(priced: AlpacaServer) -> None:
    priced.keys = ("PKOTHERKEY000000000", "another-secret-00000")
    with pytest.raises(AlpacaHttpError) as caught:
        client_for(AlpacaServerKeys(priced)).account()
    assert caught.value.status == 401
    assert "another-secret" not in str(caught.value)


class AlpacaServerKeys:
    """The server's address with keys it does not accept."""

    def __init__(self, server: AlpacaServer) -> None:
        self.url, self.keys = server.url, ("PKWRONGKEY000000000", "wrong-secret-0000000")


def test_the_market_closed_is_read_from_the_clock_endpoint(priced: AlpacaServer) -> None:
    priced.is_open = False
    assert broker_for(priced).market_open() is False
    assert broker_for(priced, trade_when_closed=True).market_open() is True
