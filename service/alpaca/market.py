"""Bars from Alpaca's market-data API (StockHistoricalDataClient, feed iex by default).

The worker's clock polls at each bar close (plus a delay, for Alpaca to publish the bar);
`bars_after` then fetches everything since each symbol's last bar, so a bar that was late
arrives at the next poll and a missed poll loses nothing. `history` back-fills the model's
window at start. Duplicate bars are dropped, and duplicates, late bars and gaps inside a
session are logged (`market.duplicate_bar`, `market.late_bar`, `market.gap`). Alpaca
stamps a bar with its START; `Bar.time` is its close.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

import structlog

from service.alpaca.client import AlpacaClient
from service.alpaca.mapping import Json, bar_from_alpaca, interval_to_timeframe
from service.broker.base import BrokerError
from service.market.bar_batch import BarBatch, batch_of
from service.market.base import MarketDataError
from service.types import Bar, Symbol, utc

log = structlog.get_logger("service.market")

DAY = timedelta(days=1)
SLACK = timedelta(days=5)  # weekends and holidays on top of the trading-hours factor


def history_span(interval: timedelta, count: int) -> timedelta:
    """How far back `count` bars may reach: markets trade 6.5 h of 24, 5 days of 7."""
    factor = 2 if interval >= DAY else 6
    return count * interval * factor + SLACK


class AlpacaMarket:
    def __init__(self, client: AlpacaClient, interval: timedelta, feed: str = "iex") -> None:
        self._client = client
        self._interval = interval
        self._timeframe = interval_to_timeframe(interval)
        self._feed = feed
        self._polled: dict[Symbol, datetime] = {}  # per symbol, the last `until` asked

    @property
    def bar_interval(self) -> timedelta:
        return self._interval

    def history(
        self, symbols: Sequence[Symbol], end: datetime, count: int
    ) -> dict[Symbol, list[Bar]]:
        end = utc(end)
        out = {}
        for symbol in symbols:  # one request each: a limit counts across all symbols
            raw = self._fetch([symbol], end - history_span(self._interval, count), end,
                              limit=count, newest_first=True)
            out[symbol] = self._clean(symbol, raw.get(symbol, []), None, end)[-count:]
            self._polled[symbol] = end
        return out

    def history_batch(self, symbols: Sequence[Symbol], end: datetime, count: int) -> BarBatch:
        return batch_of(self.history(symbols, end, count))

    def bars_after(
        self, after: Mapping[Symbol, datetime], until: datetime
    ) -> dict[Symbol, list[Bar]]:
        if not after:
            return {}
        until = utc(until)
        start = min(utc(t) for t in after.values())  # the bar closing after t starts at t
        raw = self._fetch(sorted(after), start, until)
        out = {}
        for symbol, since in after.items():
            bars = self._clean(symbol, raw.get(symbol, []), utc(since), until)
            self._note_late(symbol, bars)
            self._polled[symbol] = until
            out[symbol] = bars
        return out

    def batch_after(self, after: Mapping[Symbol, datetime], until: datetime) -> BarBatch:
        return batch_of(self.bars_after(after, until))

    def first_bar_time(self, symbols: Sequence[Symbol]) -> datetime | None:
        return None  # live data has no start the service needs to know

    def last_bar_time(self, symbols: Sequence[Symbol]) -> datetime | None:
        return None  # live data has no end

    # -- internals ---------------------------------------------------------------------------

    def _fetch(self, symbols: list[Symbol], start: datetime, end: datetime,
               limit: int | None = None, newest_first: bool = False) -> dict[str, list[Json]]:
        last_start = end - self._interval  # a bar closing at `end` starts one interval before
        if last_start < start:
            return {}
        try:
            return self._client.bars(symbols, self._timeframe, start, last_start, self._feed,
                                     limit=limit, newest_first=newest_first)
        except BrokerError as error:
            raise MarketDataError(f"Alpaca bars for {','.join(symbols)}: {error}") from None

    def _clean(self, symbol: Symbol, raw: list[Json], after: datetime | None,
               until: datetime) -> list[Bar]:
        """Ascending, unique, inside (after, until]; duplicates and gaps logged."""
        by_time: dict[datetime, Bar] = {}
        for item in raw:
            bar = bar_from_alpaca(item, self._interval)
            if bar.time in by_time:
                log.warning("market.duplicate_bar", symbol=symbol, bar_time=bar.time.isoformat())
            by_time[bar.time] = bar
        bars = [by_time[t] for t in sorted(by_time)
                if (after is None or t > after) and t <= until]
        self._note_gaps(symbol, bars, after)
        return bars

    def _note_gaps(self, symbol: Symbol, bars: list[Bar], after: datetime | None) -> None:
        if self._interval >= DAY:
            return  # daily bars skip weekends and holidays as a matter of course
        previous = after
        for bar in bars:
            same_session = previous is not None and previous.date() == bar.time.date()
            if same_session and previous is not None and bar.time - previous > self._interval:
                missing = int((bar.time - previous) / self._interval) - 1
                log.info("market.gap", symbol=symbol, after=previous.isoformat(),
                         bar_time=bar.time.isoformat(), missing_bars=missing)
            previous = bar.time

    def _note_late(self, symbol: Symbol, bars: list[Bar]) -> None:
        polled = self._polled.get(symbol)
        for bar in bars:
            if polled is not None and bar.time <= polled:
                log.info("market.late_bar", symbol=symbol, bar_time=bar.time.isoformat(),
                         polled_until=polled.isoformat())
