"""Bars from the local server through alpaca-py: pagination, back-fill, duplicates, late
bars, gaps."""

from __future__ import annotations

from datetime import timedelta

import pytest
import structlog
from alpaca_server import AlpacaServer
from alpaca_server.book import START
from alpaca_server.clients import market_for

from service.market.base import MarketDataError

MINUTE = timedelta(minutes=1)
NOW = START + 300 * MINUTE


def test_history_back_fills_the_window_across_pages(alpaca_server: AlpacaServer) -> None:
    alpaca_server.page_size = 7
    history = market_for(alpaca_server).history(["SPY", "QQQ"], NOW, 40)
    for bars in history.values():
        assert [b.time for b in bars] == [NOW - i * MINUTE for i in range(39, -1, -1)]
    assert alpaca_server.requests.count("GET /v2/stocks/bars") > 2 * 40 // 7


def test_bars_after_follows_next_page_token_and_ends_at_until(alpaca_server: AlpacaServer) -> None:
    alpaca_server.page_size = 5
    got = market_for(alpaca_server).bars_after({"SPY": NOW, "QQQ": NOW + 10 * MINUTE},
                                               NOW + 20 * MINUTE)
    assert [b.time for b in got["SPY"]] == [NOW + i * MINUTE for i in range(1, 21)]
    assert [b.time for b in got["QQQ"]] == [NOW + i * MINUTE for i in range(11, 21)]


def test_a_batch_holds_the_bars_of_bars_after(alpaca_server: AlpacaServer) -> None:
    after, until = {"SPY": NOW, "QQQ": NOW + 10 * MINUTE}, NOW + 20 * MINUTE
    batch = market_for(alpaca_server).batch_after(after, until)
    assert batch.symbols == ("SPY", "QQQ") and len(batch.times) == 30
    assert batch.as_dict() == market_for(alpaca_server).bars_after(after, until)


def test_a_history_batch_holds_the_bars_of_history(alpaca_server: AlpacaServer) -> None:
    batch = market_for(alpaca_server).history_batch(["QQQ", "SPY"], NOW, 3)
    assert batch.symbols == ("QQQ", "SPY") and len(batch.times) == 6
    assert batch.as_dict() == market_for(alpaca_server).history(["QQQ", "SPY"], NOW, 3)


def test_duplicate_bars_are_dropped_and_logged(alpaca_server: AlpacaServer) -> None:
    alpaca_server.faults.queue("GET /v2/stocks/bars", "duplicate_bar")
    with structlog.testing.capture_logs() as logs:
        got = market_for(alpaca_server).bars_after({"SPY": NOW}, NOW + 3 * MINUTE)
    assert len(got["SPY"]) == 3
    assert len([e for e in logs if e["event"] == "market.duplicate_bar"]) == 3


def test_a_missing_bar_arrives_at_the_next_poll_and_is_logged_late(
    alpaca_server: AlpacaServer,
) -> None:
    market = market_for(alpaca_server)
    alpaca_server.faults.queue("GET /v2/stocks/bars", "missing_bar")
    first = market.bars_after({"SPY": NOW}, NOW + 3 * MINUTE)["SPY"]
    assert [b.time for b in first] == [NOW + MINUTE, NOW + 2 * MINUTE]
    with structlog.testing.capture_logs() as logs:
        second = market.bars_after({"SPY": first[-1].time}, NOW + 4 * MINUTE)["SPY"]
    assert [b.time for b in second] == [NOW + 3 * MINUTE, NOW + 4 * MINUTE]
    [late] = [e for e in logs if e["event"] == "market.late_bar"]
    assert late["bar_time"] == (NOW + 3 * MINUTE).isoformat()


def test_a_gap_inside_the_session_is_logged_with_the_bars_missing(
    alpaca_server: AlpacaServer,
) -> None:
    with structlog.testing.capture_logs() as logs:
        market_for(alpaca_server).bars_after({"SPY": NOW - 5 * MINUTE}, NOW)
        market_for(alpaca_server)._note_gaps("SPY", [], None)  # nothing: nothing logged
    assert not [e for e in logs if e["event"] == "market.gap"]
    bars = market_for(alpaca_server).history(["SPY"], NOW, 3)["SPY"]
    with structlog.testing.capture_logs() as logs:
        market_for(alpaca_server)._note_gaps("SPY", [bars[0], bars[2]], None)
    [gap] = [e for e in logs if e["event"] == "market.gap"]
    assert gap["missing_bars"] == 1


def test_an_unreachable_feed_is_a_market_data_error(alpaca_server: AlpacaServer) -> None:
    alpaca_server.faults.queue("GET /v2/stocks/bars", *["503"] * 4)
    with pytest.raises(MarketDataError, match="Alpaca bars for SPY"):
        market_for(alpaca_server).bars_after({"SPY": NOW}, NOW + MINUTE)
