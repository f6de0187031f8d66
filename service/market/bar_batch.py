"""Bars of many symbols as columns: the form a warm update's fetch takes, so that checking
and appending hundreds of instruments' new bars costs a few numpy calls, not a Bar object
and a handful of numpy calls per instrument.

Symbol k's bars are rows bounds[k]:bounds[k + 1] of `times` and `values`, ascending in
time (the MarketFeed contract); `values` holds open, high, low, close and volume as
float64, one row per bar, so a value that is not a number cannot be represented at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from itertools import accumulate, chain
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from service.types import Bar, Symbol

COLUMNS = 5  # open, high, low, close, volume
OPEN, CLOSE = 0, 3  # the open's and the close's columns


class BarBatch(NamedTuple):
    symbols: tuple[Symbol, ...]
    bounds: tuple[int, ...]  # len(symbols) + 1 row offsets, from 0 to len(times)
    times: tuple[datetime, ...]  # one per row: the bar's close time
    values: npt.NDArray[np.float64]  # shape (rows, COLUMNS)

    def bars(self, k: int) -> list[Bar]:
        """Symbol k's bars as Bar objects (the slow form, for the rare paths)."""
        lo, hi = self.bounds[k], self.bounds[k + 1]
        rows = self.values[lo:hi].tolist()
        return [Bar(t, *row) for t, row in zip(self.times[lo:hi], rows, strict=True)]

    def as_dict(self) -> dict[Symbol, list[Bar]]:
        """The same bars in bars_after's form (one conversion of all the values)."""
        rows = self.values.tolist()
        bars = [Bar(t, *row) for t, row in zip(self.times, rows, strict=True)]
        spans = zip(self.symbols, self.bounds[:-1], self.bounds[1:], strict=True)
        return {symbol: bars[lo:hi] for symbol, lo, hi in spans}

    def owner(self, row: int) -> int:
        """Which symbol (its index) row `row` belongs to."""
        return int(np.searchsorted(self.bounds, row, side="right")) - 1

    def keep(self, rows: npt.NDArray[np.bool_]) -> BarBatch:
        """Only the rows where `rows` is True; every symbol stays, maybe with no bar."""
        kept = np.concatenate(([0], np.cumsum(rows)))
        times = tuple(t for t, k in zip(self.times, rows.tolist(), strict=True) if k)
        return BarBatch(self.symbols, tuple(kept[list(self.bounds)].tolist()), times,
                        self.values[rows])


def batch_of(bars: Mapping[Symbol, Sequence[Bar]]) -> BarBatch:
    """Bars in bars_after's form as a batch, their values read as float64 (every feed
    builds its bars from floats)."""
    rows = [(b.open, b.high, b.low, b.close, b.volume) for got in bars.values() for b in got]
    values = np.array(rows, dtype=np.float64).reshape(-1, COLUMNS)
    times = tuple(b.time for got in bars.values() for b in got)
    bounds = tuple(accumulate((len(got) for got in bars.values()), initial=0))
    return BarBatch(tuple(bars), bounds, times, values)


def joined(symbols: Sequence[Symbol], times: Sequence[Sequence[datetime]],
           blocks: Sequence[npt.NDArray[np.float64]]) -> BarBatch:
    """One batch from each symbol's times and (n, COLUMNS) block of values."""
    values = np.concatenate(blocks) if blocks else np.zeros((0, COLUMNS))
    bounds = tuple(accumulate(map(len, times), initial=0))
    return BarBatch(tuple(symbols), bounds, tuple(chain.from_iterable(times)), values)
