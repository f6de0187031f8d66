"""Replay of users' OHLCV CSV files, one `<SYMBOL>.csv` per symbol in a directory.

What a file must look like, and what is skipped or refused, is in csv_load (rows) and
csv_source (the text). Each file is loaded once, on first use (or by `preload`), into
numpy arrays; queries are answered with `np.searchsorted`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

import numpy as np

from service.market.bar_batch import BarBatch, batch_of
from service.market.csv_load import Series, load_file, parse_time
from service.market.csv_load import to_us as _to_us
from service.settings import CsvMarketSettings
from service.types import Bar, Symbol

__all__ = ["CsvMarket", "load_file", "parse_time"]


# -- the feed --------------------------------------------------------------------------


class CsvMarket:
    """A MarketFeed over a directory of per-symbol CSV files."""

    def __init__(self, settings: CsvMarketSettings, interval: timedelta) -> None:
        """`settings.directory` as it is: the caller resolves it (beside service.toml)."""
        if interval <= timedelta(0):
            raise ValueError(f"the CSV market's interval must be positive, got {interval}")
        self._settings = settings
        self._interval = interval
        self._series: dict[Symbol, Series] = {}

    @property
    def bar_interval(self) -> timedelta:
        return self._interval

    def preload(self, symbols: Sequence[Symbol]) -> None:
        """Load and validate these symbols' files now (at start-up, before trading)."""
        for symbol in symbols:
            self._get(symbol)

    def history(
        self, symbols: Sequence[Symbol], end: datetime, count: int
    ) -> dict[Symbol, list[Bar]]:
        end_us = _to_us(end)
        result: dict[Symbol, list[Bar]] = {}
        for symbol in symbols:
            series = self._get(symbol)
            hi = int(np.searchsorted(series.times, end_us, side="right"))
            result[symbol] = series.bars(max(0, hi - max(count, 0)), hi)
        return result

    def history_batch(self, symbols: Sequence[Symbol], end: datetime, count: int) -> BarBatch:
        return batch_of(self.history(symbols, end, count))

    def bars_after(
        self, after: Mapping[Symbol, datetime], until: datetime
    ) -> dict[Symbol, list[Bar]]:
        until_us = _to_us(until)
        result: dict[Symbol, list[Bar]] = {}
        for symbol, t in after.items():
            series = self._get(symbol)
            lo, hi = np.searchsorted(series.times, [_to_us(t), until_us], side="right")
            result[symbol] = series.bars(int(lo), max(int(lo), int(hi)))
        return result

    def batch_after(self, after: Mapping[Symbol, datetime], until: datetime) -> BarBatch:
        return batch_of(self.bars_after(after, until))

    def first_bar_time(self, symbols: Sequence[Symbol]) -> datetime | None:
        return max((self._get(s).first() for s in symbols), default=None)

    def last_bar_time(self, symbols: Sequence[Symbol]) -> datetime | None:
        return max((self._get(s).last() for s in symbols), default=None)

    def _get(self, symbol: Symbol) -> Series:
        series = self._series.get(symbol)
        if series is None:
            series = load_file(self._settings.directory / f"{symbol}.csv", self._settings,
                               self._interval)
            self._series[symbol] = series
        return series
