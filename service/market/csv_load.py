"""One user's OHLCV CSV file, read and validated into a `Series`.

Timestamps (the bar's close time) are read as UTC:
- ISO 8601 with `Z` or an explicit offset (`2024-01-02T14:31:00Z`, `...+00:00`); another
  offset is unambiguous and is converted to UTC;
- a plain date `YYYY-MM-DD` is UTC midnight (daily bars);
- a date-time without an offset is refused, unless `naive_is_utc=True` in the settings.

Bad rows are skipped with a `market.row_skipped` warning naming the file, the line the
row starts on (`row`; the header is line 1) and the reason: unparseable or naive
timestamp, empty or non-numeric value, a bar outside the bounds of `bar_checks` (prices,
volume, high/low), a duplicate timestamp (the first is kept), a timestamp going
backwards. Gaps (missing bars for the interval) are kept and logged once each
(`market.gap`).

A file that cannot be used at all raises UnusableDataError naming the file, the line and
what to do: unreadable text (see csv_source), empty, no header or no data rows, a missing
or repeated column, more than `max_unsorted_fraction` of the rows going backwards, no
valid row.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import structlog

from service.market.bar_checks import value_problem
from service.market.base import UnusableDataError
from service.market.csv_source import records
from service.settings import CsvMarketSettings
from service.types import Bar, utc

log = structlog.get_logger(__name__)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_STRIPPED = " \t\r\n\ufeff"  # whitespace, and a byte-order mark a file may carry twice
Values = tuple[float, float, float, float, float]


class RowError(ValueError):
    """One row is unusable; the message, "<kind>: <detail>", is the reason logged."""


@dataclass(frozen=True, slots=True)
class Series:
    """One symbol's bars: times in UTC microseconds since the epoch, ascending."""

    times: npt.NDArray[np.int64]
    ohlcv: npt.NDArray[np.float64]  # shape (n, 5): open, high, low, close, volume

    def bars(self, lo: int, hi: int) -> list[Bar]:
        return [
            Bar(from_us(t), *values)
            for t, values in zip(self.times[lo:hi].tolist(), self.ohlcv[lo:hi].tolist(),
                                 strict=True)
        ]

    def first(self) -> datetime:
        return from_us(int(self.times[0]))

    def last(self) -> datetime:
        return from_us(int(self.times[-1]))


def to_us(t: datetime) -> int:
    return (utc(t) - EPOCH) // _US


def from_us(us: int) -> datetime:
    return EPOCH + timedelta(microseconds=us)


# -- parsing one row -------------------------------------------------------------------


def parse_time(text: str, naive_is_utc: bool) -> datetime:
    """A UTC datetime from one timestamp cell, or RowError saying why not."""
    text = text.strip(_STRIPPED)
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), datetime.min.time(), UTC)
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise RowError(f"unparseable timestamp: {text!r}") from None
    if parsed.tzinfo is None:
        if not naive_is_utc:
            raise RowError(f"naive timestamp: {text!r} (add 'Z' or set naive_is_utc)")
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _number(name: str, text: str) -> float:
    if not text.strip():
        raise RowError(f"empty {name}")
    try:
        value = float(text)
    except ValueError:
        raise RowError(f"non-numeric {name}: {text!r}") from None
    if not math.isfinite(value):
        raise RowError(f"non-finite {name}: {text!r}")
    return value


def parse_values(cells: Sequence[str]) -> Values:
    """open, high, low, close, volume from their cells, or RowError saying why not."""
    o, h, low, c, v = (_number(n, t) for n, t in zip(_VALUE_NAMES, cells, strict=True))
    problem = value_problem(o, h, low, c, v)
    if problem is not None:
        raise RowError(problem)
    return o, h, low, c, v


_VALUE_NAMES = ("open", "high", "low", "close", "volume")


# -- loading one file ------------------------------------------------------------------


@dataclass
class _Loader:
    """Accumulates one file's accepted rows, checking order and gaps as they come."""

    file: str
    interval_us: int
    times: list[int] = field(default_factory=list)
    values: list[Values] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    data_rows: int = 0
    unsorted: list[int] = field(default_factory=list)  # lines going backwards in time
    reasons: Counter[str] = field(default_factory=Counter)

    def skip(self, row: int, reason: str) -> None:
        self.reasons[reason.split(":", maxsplit=1)[0]] += 1
        log.warning("market.row_skipped", file=self.file, row=row, reason=reason)

    def accept(self, row: int, t_us: int, values: Values) -> None:
        if self.times and t_us <= self.times[-1]:
            self._out_of_order(row, t_us)
            return
        if self.times:
            self._check_gap(row, t_us - self.times[-1])
        self.times.append(t_us)
        self.values.append(values)
        self.rows.append(row)

    def _out_of_order(self, row: int, t_us: int) -> None:
        if t_us == self.times[-1]:
            self.skip(row, f"duplicate timestamp: first kept at row {self.rows[-1]}")
            return
        self.unsorted.append(row)
        self.skip(row, f"timestamp goes backwards: {from_us(t_us).isoformat()} after row "
                       f"{self.rows[-1]}'s {from_us(self.times[-1]).isoformat()}")

    def _check_gap(self, row: int, step_us: int) -> None:
        missing = round(step_us / self.interval_us) - 1
        if missing >= 1:
            log.info("market.gap", file=self.file, row=row, missing_bars=missing)


def _header_indices(
    file: str, line: int, header: list[str], settings: CsvMarketSettings
) -> list[int]:
    names = [name.strip(_STRIPPED) for name in header]
    missing = [col for col in settings.columns if col not in names]
    if missing:
        raise UnusableDataError(
            file, f"missing column(s) {', '.join(missing)} in the header "
            f"{', '.join(map(repr, names))}; rename the columns or set the *_column "
            "settings", line)
    repeated = [col for col in settings.columns if names.count(col) > 1]
    if repeated:
        raise UnusableDataError(
            file, f"column {repeated[0]} appears twice in the header; rename or remove "
            "one of them", line)
    return [names.index(col) for col in settings.columns]


def _read_row(loader: _Loader, row: int, cells: list[str], idx: list[int],
              settings: CsvMarketSettings) -> None:
    if len(cells) <= max(idx):
        loader.skip(row, f"short row: {len(cells)} fields, the header needs {max(idx) + 1}")
        return
    try:
        t = parse_time(cells[idx[0]], settings.naive_is_utc)
        values = parse_values([cells[i] for i in idx[1:]])
    except RowError as err:
        loader.skip(row, str(err))
        return
    loader.accept(row, to_us(t), values)


def load_file(path: Path, settings: CsvMarketSettings, interval: timedelta) -> Series:
    """Read and validate one CSV file; UnusableDataError when it cannot be used at all."""
    file, rows = str(path), records(path)
    line, header = _header(file, rows)
    idx = _header_indices(file, line, header, settings)
    loader = _Loader(file, interval // _US)
    for row, cells in rows:
        loader.data_rows += 1
        _read_row(loader, row, cells, idx, settings)
    return _finish(file, line, loader, settings)


def _header(file: str, rows: Iterator[tuple[int, list[str]]]) -> tuple[int, list[str]]:
    first = next(rows, None)
    if first is None:
        raise UnusableDataError(file, "the file is empty; it needs a header line and rows", 1)
    return first


def _finish(file: str, header_line: int, loader: _Loader, settings: CsvMarketSettings) -> Series:
    if not loader.data_rows:
        raise UnusableDataError(file, "no data rows after the header; add the bars",
                                header_line)
    if len(loader.unsorted) > settings.max_unsorted_fraction * loader.data_rows:
        raise UnusableDataError(
            file, f"{len(loader.unsorted)} of {loader.data_rows} rows go backwards in time, "
            f"the first here; sort the file by {settings.time_column} ascending",
            loader.unsorted[0])
    if not loader.times:
        common = ", ".join(f"{r} x{n}" for r, n in loader.reasons.most_common(3))
        raise UnusableDataError(
            file, f"no valid rows ({loader.data_rows} data rows; skipped: {common}); see "
            "the market.row_skipped warnings and fix the file")
    return Series(np.asarray(loader.times, dtype=np.int64),
                  np.asarray(loader.values, dtype=np.float64).reshape(-1, 5))
