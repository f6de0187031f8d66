"""Replay of users' OHLCV CSV files, one `<SYMBOL>.csv` per symbol in a directory.

Timestamps (the bar's close time) are read as UTC:
- ISO 8601 with `Z` or an explicit offset (`2024-01-02T14:31:00Z`, `...+00:00`); another
  offset is unambiguous and is converted to UTC;
- a plain date `YYYY-MM-DD` is UTC midnight (daily bars);
- a date-time without an offset is refused, unless `naive_is_utc=True` in the settings.

Bad rows are skipped with a `market.row_skipped` warning naming the file, the 1-based row
(the header is row 1) and the reason: unparseable or naive timestamp, empty, non-numeric,
non-finite or non-positive price, negative volume, high < low, open or close outside
[low, high], a duplicate timestamp (the first is kept), a timestamp going backwards. When
more than `max_unsorted_fraction` of the rows go backwards the file is refused: sort it.
Gaps (missing bars for the interval) are kept and logged once each (`market.gap`).

Each file is loaded once, on first use (or by `preload`), into numpy arrays; queries are
answered with `np.searchsorted`.
"""

from __future__ import annotations

import csv
import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import structlog

from service.market.base import MarketDataError
from service.types import Bar, Symbol, utc

log = structlog.get_logger(__name__)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)


class RowError(ValueError):
    """One row is unusable; the message, "<kind>: <detail>", is the reason logged."""


@dataclass(frozen=True, slots=True)
class CsvSettings:
    directory: Path
    interval: timedelta
    time_column: str = "time"
    open_column: str = "open"
    high_column: str = "high"
    low_column: str = "low"
    close_column: str = "close"
    volume_column: str = "volume"
    naive_is_utc: bool = False  # read date-times without an offset as UTC
    max_unsorted_fraction: float = 0.05  # past this share of rows going backwards: refuse

    def __post_init__(self) -> None:
        object.__setattr__(self, "directory", Path(self.directory))
        if self.interval <= timedelta(0):
            raise ValueError(f"CsvSettings.interval must be positive, got {self.interval}")
        if not 0.0 <= self.max_unsorted_fraction <= 1.0:
            raise ValueError(
                "CsvSettings.max_unsorted_fraction must be within [0, 1], "
                f"got {self.max_unsorted_fraction}"
            )

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.time_column, self.open_column, self.high_column, self.low_column,
                self.close_column, self.volume_column)


@dataclass(frozen=True, slots=True)
class Series:
    """One symbol's bars: times in UTC microseconds since the epoch, ascending."""

    times: npt.NDArray[np.int64]
    ohlcv: npt.NDArray[np.float64]  # shape (n, 5): open, high, low, close, volume

    def bars(self, lo: int, hi: int) -> list[Bar]:
        return [
            Bar(_from_us(t), *values)
            for t, values in zip(self.times[lo:hi].tolist(), self.ohlcv[lo:hi].tolist(),
                                 strict=True)
        ]

    def first(self) -> datetime:
        return _from_us(int(self.times[0]))

    def last(self) -> datetime:
        return _from_us(int(self.times[-1]))


def _to_us(t: datetime) -> int:
    return (utc(t) - EPOCH) // _US


def _from_us(us: int) -> datetime:
    return EPOCH + timedelta(microseconds=us)


# -- parsing one row -------------------------------------------------------------------


def parse_time(text: str, naive_is_utc: bool) -> datetime:
    """A UTC datetime from one timestamp cell, or RowError saying why not."""
    text = text.strip()
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


def parse_values(cells: Sequence[str]) -> tuple[float, float, float, float, float]:
    """open, high, low, close, volume from their cells, or RowError saying why not."""
    o, h, low, c, v = (_number(n, t) for n, t in zip(_VALUE_NAMES, cells, strict=True))
    for name, price in zip(_VALUE_NAMES, (o, h, low, c), strict=False):
        if price <= 0:
            raise RowError(f"non-positive {name}: {price}")
    if v < 0:
        raise RowError(f"negative volume: {v}")
    if h < low:
        raise RowError(f"high below low: {h} < {low}")
    for name, price in (("open", o), ("close", c)):
        if not low <= price <= h:
            raise RowError(f"{name} outside [low, high]: {price} not in [{low}, {h}]")
    return o, h, low, c, v


_VALUE_NAMES = ("open", "high", "low", "close", "volume")


# -- loading one file ------------------------------------------------------------------


@dataclass
class _Loader:
    """Accumulates one file's accepted rows, checking order and gaps as they come."""

    file: str
    interval_us: int
    times: list[int] = field(default_factory=list)
    values: list[tuple[float, float, float, float, float]] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    data_rows: int = 0
    unsorted: int = 0
    reasons: Counter[str] = field(default_factory=Counter)

    def skip(self, row: int, reason: str) -> None:
        self.reasons[reason.split(":", maxsplit=1)[0]] += 1
        log.warning("market.row_skipped", file=self.file, row=row, reason=reason)

    def accept(self, row: int, t_us: int, values: tuple[float, float, float, float, float]) -> None:
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
        self.unsorted += 1
        self.skip(row, f"timestamp goes backwards: {_from_us(t_us).isoformat()} after row "
                       f"{self.rows[-1]}'s {_from_us(self.times[-1]).isoformat()}")

    def _check_gap(self, row: int, step_us: int) -> None:
        missing = round(step_us / self.interval_us) - 1
        if missing >= 1:
            log.info("market.gap", file=self.file, row=row, missing_bars=missing)


def _records(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(1-based row number, cells) of every non-blank record, header included."""
    with path.open(newline="", encoding="utf-8-sig") as handle:
        for row, cells in enumerate(csv.reader(handle), start=1):
            if cells and any(cell.strip() for cell in cells):
                yield row, cells


def _header_indices(path: Path, header: list[str], settings: CsvSettings) -> list[int]:
    names = [name.strip() for name in header]
    missing = [col for col in settings.columns if col not in names]
    if missing:
        raise MarketDataError(
            f"{path}: missing column(s) {', '.join(missing)}; the header has "
            f"{', '.join(names)}. Rename the columns or set the *_column settings"
        )
    return [names.index(col) for col in settings.columns]


def _read_row(loader: _Loader, row: int, cells: list[str], idx: list[int],
              settings: CsvSettings) -> None:
    if len(cells) <= max(idx):
        loader.skip(row, f"short row: {len(cells)} fields, the header needs {max(idx) + 1}")
        return
    try:
        t = parse_time(cells[idx[0]], settings.naive_is_utc)
        values = parse_values([cells[i] for i in idx[1:]])
    except RowError as err:
        loader.skip(row, str(err))
        return
    loader.accept(row, _to_us(t), values)


def load_file(path: Path, settings: CsvSettings) -> Series:
    """Read and validate one CSV file; MarketDataError when it cannot be used at all."""
    if not path.is_file():
        raise MarketDataError(
            f"{path}: no such file; put one CSV per symbol in {settings.directory} "
            "named <SYMBOL>.csv"
        )
    records = _records(path)
    header = next(records, None)
    if header is None:
        raise MarketDataError(f"{path}: the file is empty; it needs a header and rows")
    idx = _header_indices(path, header[1], settings)
    loader = _Loader(str(path), settings.interval // _US)
    for row, cells in records:
        loader.data_rows += 1
        _read_row(loader, row, cells, idx, settings)
    return _finish(path, loader, settings)


def _finish(path: Path, loader: _Loader, settings: CsvSettings) -> Series:
    if loader.unsorted > settings.max_unsorted_fraction * loader.data_rows:
        raise MarketDataError(
            f"{path}: {loader.unsorted} of {loader.data_rows} rows go backwards in time; "
            f"sort the file by {settings.time_column} ascending"
        )
    if not loader.times:
        common = ", ".join(f"{r} x{n}" for r, n in loader.reasons.most_common(3))
        raise MarketDataError(
            f"{path}: no valid rows ({loader.data_rows} data rows; skipped: "
            f"{common or 'none'}); see the market.row_skipped warnings and fix the file"
        )
    return Series(np.asarray(loader.times, dtype=np.int64),
                  np.asarray(loader.values, dtype=np.float64).reshape(-1, 5))


# -- the feed --------------------------------------------------------------------------


class CsvMarket:
    """A MarketFeed over a directory of per-symbol CSV files."""

    def __init__(self, settings: CsvSettings) -> None:
        self._settings = settings
        self._series: dict[Symbol, Series] = {}

    @property
    def bar_interval(self) -> timedelta:
        return self._settings.interval

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

    def first_bar_time(self, symbols: Sequence[Symbol]) -> datetime | None:
        return max((self._get(s).first() for s in symbols), default=None)

    def last_bar_time(self, symbols: Sequence[Symbol]) -> datetime | None:
        return max((self._get(s).last() for s in symbols), default=None)

    def _get(self, symbol: Symbol) -> Series:
        series = self._series.get(symbol)
        if series is None:
            series = load_file(self._settings.directory / f"{symbol}.csv", self._settings)
            self._series[symbol] = series
        return series
