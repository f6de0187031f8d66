"""The market-data interface every feed implements, and the clock that paces bars."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Protocol

from service.market.bar_batch import BarBatch
from service.types import Bar, Symbol


class MarketDataError(Exception):
    """A feed could not produce bars (bad file, unreachable service). Says what and where."""


class UnusableDataError(MarketDataError):
    """A data file that cannot be used until a person fixes it: retrying or restarting
    cannot help, so the worker exits 78 (bad configuration) and the account is parked.
    `line` and `column` are 1-based; None where the problem is the whole file or line."""

    def __init__(
        self, file: str, reason: str, line: int | None = None, column: int | None = None
    ) -> None:
        self.file, self.reason, self.line, self.column = file, reason, line, column
        where = "" if line is None else f" (line {line}" + (
            "" if column is None else f", column {column}") + ")"
        super().__init__(f"{file}: {reason}{where}")


class MarketFeed(Protocol):
    """Bars for a set of symbols. Times are bar close times, UTC, ascending."""

    @property
    def bar_interval(self) -> timedelta: ...

    def history(
        self, symbols: Sequence[Symbol], end: datetime, count: int
    ) -> dict[Symbol, list[Bar]]:
        """The last `count` bars with time <= end per symbol (fewer where data starts later)."""
        ...

    def history_batch(self, symbols: Sequence[Symbol], end: datetime, count: int) -> BarBatch:
        """history's bars as columns, symbols in `symbols`' order: what the simulated
        broker prices every position with, without a Bar object per position."""
        ...

    def bars_after(
        self, after: Mapping[Symbol, datetime], until: datetime
    ) -> dict[Symbol, list[Bar]]:
        """Per symbol, every bar with after[symbol] < time <= until."""
        ...

    def batch_after(self, after: Mapping[Symbol, datetime], until: datetime) -> BarBatch:
        """bars_after's bars as columns, symbols in `after`'s order: what a warm update
        takes, checked and appended for all instruments at once."""
        ...

    def first_bar_time(self, symbols: Sequence[Symbol]) -> datetime | None:
        """The earliest time at which every symbol has data (None: unbounded, e.g. synthetic)."""
        ...

    def last_bar_time(self, symbols: Sequence[Symbol]) -> datetime | None:
        """The latest bar any symbol has (None: unbounded, e.g. synthetic or live)."""
        ...
