"""The bounds every bar must meet before anything uses it, whatever its source (CSV,
synthetic, Alpaca), and the feed that applies them.

A bar is usable when:
- every price (open, high, low, close) is a finite number with 0 < price < MAX_PRICE;
- its volume is a finite number with 0 <= volume <= MAX_VOLUME;
- low <= open <= high and low <= close <= high (so high >= low);
- its time is timezone-aware.

MAX_PRICE is 1e9: the dearest listed share (BRK.A) trades under 1e6, so the bound leaves
three orders of magnitude of room while keeping prices, quantities x prices and log
returns far from float64 overflow (1e300 would turn equity and returns into inf/nan).
MAX_VOLUME is 1e13 shares a bar: the busiest US stocks trade ~1e9 shares a day.

CheckedFeed wraps any MarketFeed: a bar outside the bounds is skipped, logged once as
`market.bar_rejected` (symbol, time, reason; a later query may return it again) and
counted; the trader reports the count in `update.completed` as `bars_rejected`. A batch
(batch_after) is screened by the same rule, row by row.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from itertools import chain

import numpy as np
import numpy.typing as npt
import structlog

from service.market.bar_batch import BarBatch
from service.market.base import MarketFeed
from service.types import Bar, Symbol

log = structlog.get_logger(__name__)

MAX_PRICE = 1e9  # exclusive upper bound of every price (the lower bound is 0, exclusive)
MAX_VOLUME = 1e13  # inclusive upper bound of a bar's volume (the lower bound is 0)
PRICE_NAMES = ("open", "high", "low", "close")
_REMEMBERED = 4096  # rejected (symbol, time) pairs kept, so each is logged once


def value_problem(
    o: float, h: float, low: float, c: float, v: float
) -> str | None:
    """Why these OHLCV values are not a usable bar ("<kind>: <detail>"); None if they are."""
    return _price_problem((o, h, low, c)) or _volume_problem(v) or _shape_problem(o, h, low, c)


def bar_problem(bar: Bar) -> str | None:
    """Why this bar is not usable; None if it is."""
    if bar.time.tzinfo is None or bar.time.utcoffset() is None:
        return f"naive time: {bar.time.isoformat()}"
    values = (bar.open, bar.high, bar.low, bar.close, bar.volume)
    for name, value in zip((*PRICE_NAMES, "volume"), values, strict=True):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"non-numeric {name}: {value!r}"
    return value_problem(*values)


def _price_problem(prices: Sequence[float]) -> str | None:
    for name, price in zip(PRICE_NAMES, prices, strict=True):
        if not math.isfinite(price):
            return f"non-finite {name}: {price!r}"
        if price <= 0:
            return f"non-positive {name}: {price}"
        if price >= MAX_PRICE:
            return f"implausible {name}: {price:g} (prices must be below {MAX_PRICE:g})"
    return None


def _volume_problem(v: float) -> str | None:
    if not math.isfinite(v):
        return f"non-finite volume: {v!r}"
    if v < 0:
        return f"negative volume: {v}"
    if v > MAX_VOLUME:
        return f"implausible volume: {v:g} (at most {MAX_VOLUME:g})"
    return None


def _shape_problem(o: float, h: float, low: float, c: float) -> str | None:
    if h < low:
        return f"high below low: {h} < {low}"
    for name, price in (("open", o), ("close", c)):
        if not low <= price <= h:
            return f"{name} outside [low, high]: {price} not in [{low}, {h}]"
    return None


def all_usable(bars: Sequence[Bar]) -> bool:
    """True when every bar meets the bounds (bar_problem would find nothing), tested over
    all of them at once; False when any might not (bar_problem then says which and why)."""
    rows = [(b.open, b.high, b.low, b.close, b.volume) for b in bars]
    try:
        values = np.array(rows, dtype=np.float64).reshape(-1, 5)
    except (TypeError, ValueError):  # a non-numeric value: bar_problem names it
        return False
    if any(b.time.utcoffset() is None for b in bars):
        return False
    # exactly int or float (a bool, a Decimal or a string that numpy would convert is not)
    return _values_usable(values) and set(map(type, chain.from_iterable(rows))) <= {int, float}


def usable_rows(batch: BarBatch) -> npt.NDArray[np.bool_]:
    """Per row of the batch, True when its bar meets the bounds (bar_problem would find
    nothing). Its values are floats by construction; its times are checked once per
    distinct time (a warm update's bars share theirs)."""
    usable = _rows_usable(batch.values)
    if any(t.utcoffset() is None for t in set(batch.times)):
        usable &= np.array([t.utcoffset() is not None for t in batch.times], dtype=bool)
    return usable


def _values_usable(values: npt.NDArray[np.float64]) -> bool:
    return bool(_rows_usable(values).all())


def _rows_usable(values: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    o, h, low, c, v = values.T
    prices = values[:, :4]
    with np.errstate(invalid="ignore"):  # nan compares False: refused
        usable: npt.NDArray[np.bool_] = (
            np.isfinite(values).all(axis=1)
            & (prices > 0).all(axis=1) & (prices < MAX_PRICE).all(axis=1)
            & (v >= 0) & (v <= MAX_VOLUME)
            & (h >= low)
            & (low <= o) & (o <= h) & (low <= c) & (c <= h)
        )
    return usable


class CheckedFeed:
    """A MarketFeed passing on only the usable bars of the feed it wraps."""

    def __init__(self, inner: MarketFeed) -> None:
        self.inner = inner
        self._rejected: OrderedDict[tuple[Symbol, datetime], None] = OrderedDict()
        self._count = 0

    @classmethod
    def around(cls, feed: MarketFeed) -> CheckedFeed:
        """`feed` checked, without checking twice."""
        return feed if isinstance(feed, CheckedFeed) else cls(feed)

    @property
    def bar_interval(self) -> timedelta:
        return self.inner.bar_interval

    def history(
        self, symbols: Sequence[Symbol], end: datetime, count: int
    ) -> dict[Symbol, list[Bar]]:
        return self._screen(self.inner.history(symbols, end, count))

    def history_batch(self, symbols: Sequence[Symbol], end: datetime, count: int) -> BarBatch:
        return self._screen_batch(self.inner.history_batch(symbols, end, count))

    def bars_after(
        self, after: Mapping[Symbol, datetime], until: datetime
    ) -> dict[Symbol, list[Bar]]:
        return self._screen(self.inner.bars_after(after, until))

    def batch_after(self, after: Mapping[Symbol, datetime], until: datetime) -> BarBatch:
        return self._screen_batch(self.inner.batch_after(after, until))

    def first_bar_time(self, symbols: Sequence[Symbol]) -> datetime | None:
        return self.inner.first_bar_time(symbols)

    def last_bar_time(self, symbols: Sequence[Symbol]) -> datetime | None:
        return self.inner.last_bar_time(symbols)

    def take_rejected(self) -> int:
        """Bars rejected (each counted once) since the last call."""
        count, self._count = self._count, 0
        return count

    def _screen(self, bars: dict[Symbol, list[Bar]]) -> dict[Symbol, list[Bar]]:
        """Every bar checked at once with numpy; only a batch holding a suspect bar is
        screened bar by bar (which names the reason), so a clean fetch of hundreds of
        instruments costs one pass over its values."""
        if all_usable([b for got in bars.values() for b in got]):
            return bars
        return {symbol: [b for b in got if self._usable(symbol, b)]
                for symbol, got in bars.items()}

    def _screen_batch(self, batch: BarBatch) -> BarBatch:
        """_screen's rule for a batch: its rows checked at once; only a suspect row is
        screened as a Bar, which names the reason and logs and counts it as _screen does."""
        usable = usable_rows(batch)
        if usable.all():
            return batch
        for row in np.flatnonzero(~usable).tolist():
            bar = Bar(batch.times[row], *batch.values[row].tolist())
            usable[row] = self._usable(batch.symbols[batch.owner(row)], bar)
        return batch.keep(usable)

    def _usable(self, symbol: Symbol, bar: Bar) -> bool:
        reason = bar_problem(bar)
        if reason is None:
            return True
        key = (symbol, bar.time)
        if key not in self._rejected:
            self._remember(key)
            log.warning("market.bar_rejected", symbol=symbol, time=bar.time.isoformat(),
                        reason=reason)
        return False

    def _remember(self, key: tuple[Symbol, datetime]) -> None:
        self._rejected[key] = None
        self._count += 1
        if len(self._rejected) > _REMEMBERED:
            self._rejected.popitem(last=False)
