"""Issue 12, the Alpaca adapter against the local server through alpaca-py's real HTTP code:
the clock in New York time, values Alpaca may add one day, and keys echoed by an error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import structlog
from alpaca_server import AlpacaServer
from alpaca_server.book import START
from alpaca_server.clients import broker_for, client_for, market_for

from service.alpaca.client import AlpacaHttpError
from service.broker.base import BrokerAuthError
from service.types import OrderIntent, OrderStatus, Side

NOW = START + timedelta(minutes=100)
PIECE = 6
ODD_KEYS = ("PKQZ7V1X9W3R5T8Y2U4A", "q8Zr2vN6pL0wX4kT9mB3hJ7cF1dS5gAe")  # no English words


@pytest.fixture
def priced(alpaca_server: AlpacaServer) -> AlpacaServer:
    market_for(alpaca_server).history(["SPY", "QQQ"], NOW, 1)  # market time at NOW
    return alpaca_server


# -- item 1: the clock answers in New York time ----------------------------------------------


def test_the_local_server_answers_the_clock_as_alpaca_does() -> None:
    server = AlpacaServer().start()
    try:
        clock = client_for(server).clock()
    finally:
        server.stop()
    for name in ("timestamp", "next_open", "next_close"):
        assert clock[name][-6:] in ("-05:00", "-04:00"), clock
    assert len(clock["timestamp"].split(".")[1]) == 9 + 6, "nine fraction digits"


@pytest.mark.parametrize("is_open", [True, False])
def test_the_market_clock_in_new_york_time_is_read(priced: AlpacaServer, is_open: bool) -> None:
    priced.is_open = is_open
    broker = broker_for(priced, trade_when_closed=False)
    assert broker.market_open() is is_open
    assert broker.market_open() is is_open
    assert priced.requests.count("GET /v2/clock") == 1, "asked again only after next_*"


def test_order_times_with_nanoseconds_pass_through_every_read(priced: AlpacaServer) -> None:
    broker = broker_for(priced)
    outcome = broker.submit(OrderIntent("rt-a-1-SPY", "SPY", Side.BUY, 1.0))
    assert outcome.status == OrderStatus.ACCEPTED
    order = client_for(priced).order_by_client_id("rt-a-1-SPY")
    assert order is not None and order["created_at"].endswith("417Z")
    assert broker.snapshot().open_orders[0].client_order_id == "rt-a-1-SPY"


# -- item 2: a value the mapping does not know ------------------------------------------------

NEW_VALUES: dict[str, dict[str, Any]] = {
    "order": {"status": "quantum_held", "side": "sell_short_exempt", "type": "twap",
              "order_type": "twap", "time_in_force": "gtx", "asset_class": "us_future",
              "order_class": "mleg"},
    "position": {"side": "flat", "asset_class": "us_future", "exchange": "MOON"},
    "account": {"status": "ONBOARDING_V2", "crypto_status": "NEW_VALUE"},
}


def test_unknown_values_from_alpaca_are_an_unknown_outcome_and_trading_goes_on(
    priced: AlpacaServer,
) -> None:
    broker = broker_for(priced)
    broker.submit(OrderIntent("rt-a-2-QQQ", "QQQ", Side.BUY, 1.0))
    priced.overrides.update(NEW_VALUES)
    with structlog.testing.capture_logs() as logs:
        sent = broker.submit(OrderIntent("rt-a-3-SPY", "SPY", Side.BUY, 1.0))
        looked = broker.lookup("rt-a-3-SPY")
        snapshot = broker.snapshot()
        broker.snapshot()
    assert sent.status == OrderStatus.UNKNOWN and sent.broker_order_id
    assert looked is not None and looked.status == OrderStatus.UNKNOWN
    assert {o.status for o in snapshot.open_orders} == {OrderStatus.UNKNOWN}
    assert priced.account.accepted == {"rt-a-2-QQQ": 1, "rt-a-3-SPY": 1}, "never resent"
    warned = [(e["field"], e["value"]) for e in logs if e["event"] == "alpaca.unknown_value"]
    assert warned == [("status", "quantum_held"), ("side", "sell_short_exempt")]


# -- item 15: keys echoed in an error body ---------------------------------------------------


def pieces(server: AlpacaServer) -> set[str]:
    return {k[i:i + PIECE] for k in server.keys for i in range(len(k) - PIECE + 1)}


def leaked(server: AlpacaServer, *written: object) -> list[str]:
    text = "\n".join(json.dumps(w, default=repr) for w in written)
    return sorted(p for p in pieces(server) if p in text)


@pytest.fixture
def odd_keys() -> Iterator[AlpacaServer]:
    server = AlpacaServer(*ODD_KEYS).start()
    market_for(server).history(["SPY"], NOW, 1)
    yield server
    server.stop()


@pytest.mark.parametrize("fault", ["echo_400", "echo_401", "echo_403", "echo_500"])
def test_an_error_body_echoing_the_keys_never_carries_a_piece_of_them(
    odd_keys: AlpacaServer, fault: str
) -> None:
    priced = odd_keys
    priced.faults.queue("GET /v2/account", *[fault] * 4)
    priced.faults.queue("POST /v2/orders", fault)
    with structlog.testing.capture_logs() as logs, pytest.raises(AlpacaHttpError) as caught:
        client_for(priced).account()
    with structlog.testing.capture_logs() as more:
        outcome = broker_for(priced).submit(OrderIntent("rt-a-4-SPY", "SPY", Side.BUY, 1.0))
    error = caught.value
    assert not leaked(priced, str(error), repr(error), error.message, logs, more, repr(outcome))
    assert "[REDACTED" in error.message or fault in ("echo_401", "echo_403")


@pytest.mark.parametrize("fault", ["echo_401", "echo_403"])
def test_an_authentication_failure_is_classified_and_its_body_is_never_kept(
    priced: AlpacaServer, fault: str
) -> None:
    priced.faults.queue("GET /v2/account", fault)
    with pytest.raises(BrokerAuthError) as caught:
        client_for(priced).account()
    assert "xxxx" not in str(caught.value) and "API keys" in str(caught.value)
    assert priced.requests.count("GET /v2/account") == 1, "a wrong key is not retried"


def test_an_order_refusal_403_stays_a_rejection_with_its_reason(priced: AlpacaServer) -> None:
    outcome = broker_for(priced).submit(OrderIntent("rt-a-5-SPY", "SPY", Side.BUY, 1e6))
    assert outcome.status == OrderStatus.REJECTED
    assert "insufficient buying power" in (outcome.reason or "")
