"""A seeded, regime-switching synthetic market: bars are a pure function of
(seed, symbol, bar time) given the settings (service.settings.SyntheticMarketSettings,
where every default is defined).

A restarted worker therefore sees exactly the bars it saw before and can back-fill the
bars it missed while down. Randomness is counter-based (splitmix64 over numpy uint64,
keyed by a blake2b hash of seed, symbol and stream), so there is no generator state.

Bar n (time `start + n * interval`, n >= 0) lies in regime segment
s = n // segment_bars, turbulent with probability `p_turbulent`; its log return is
drift_r + vol_r * z_n. Log closes are cumulative sums of returns, computed in chunks of
`CHUNK` bars with one cached chunk-end log price per chunk, so a far-future bar costs
O(n / CHUNK) once and O(1) afterwards. open(n) = close(n - 1) (start_price for n = 0).
A chunk is kept as one row per bar (open, high, low, close, volume: BarBatch's columns),
so a fetch of one new bar for hundreds of symbols is a row view of each symbol's chunk,
joined once.

Not thread-safe: one feed per worker.
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from itertools import repeat
from operator import itemgetter
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from service.market.bar_batch import COLUMNS, BarBatch, joined
from service.market.base import MarketDataError
from service.settings import MarketSettings, SyntheticMarketSettings
from service.types import Bar, Symbol, utc

CHUNK = 4096
# Full chunks kept per feed: one per symbol asked for (each ~4096 * 5 floats, 160 KB) and
# this many more. Fewer than one per symbol would rebuild every symbol's chunk at every
# update once the rotation outgrows the cache (268 symbols: 0.8 s a fetch).
_CHUNK_CACHE_SLACK = 64
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
CALM, TURBULENT = 0, 1

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
_NO_ROWS: F64 = np.zeros((0, COLUMNS))


class _BarArrays(NamedTuple):
    """Columns for a run of consecutive bars."""

    open: F64
    high: F64
    low: F64
    close: F64
    volume: F64


def _mix(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """splitmix64's finaliser; uint64 arithmetic wraps, as intended."""
    x = (x ^ (x >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))


def _stream_key(seed: int, symbol: Symbol, stream: str) -> np.uint64:
    digest = hashlib.blake2b(f"{seed}|{symbol}|{stream}".encode(), digest_size=8).digest()
    return np.uint64(int.from_bytes(digest, "little"))


def _uniform(key: np.uint64, counters: I64) -> F64:
    """Uniforms in (0, 1), one per counter: a pure function of (key, counter)."""
    bits = _mix(key + counters.astype(np.uint64) * _GOLDEN) >> np.uint64(11)
    return (bits.astype(np.float64) + 0.5) * 2.0**-53


def _normal(seed: int, symbol: Symbol, stream: str, counters: I64) -> F64:
    """Standard normals by Box-Muller over two independent uniform streams."""
    u1 = _uniform(_stream_key(seed, symbol, stream + ".u1"), counters)
    u2 = _uniform(_stream_key(seed, symbol, stream + ".u2"), counters)
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


class SyntheticMarket:
    """A MarketFeed over `SyntheticMarketSettings`; bars exist at and after `settings.start`,
    one per `interval`. Left out, each is the settings model's default (one source)."""

    def __init__(
        self, settings: SyntheticMarketSettings | None = None, interval: timedelta | None = None
    ) -> None:
        self._s = settings if settings is not None else SyntheticMarketSettings()
        self._interval = interval if interval is not None else MarketSettings().bar_interval
        if self._interval <= timedelta(0):
            raise ValueError(f"the synthetic market's interval must be positive, got {interval}")
        self._chunk_ends: dict[Symbol, list[float]] = {}
        self._chunks: OrderedDict[tuple[Symbol, int], F64] = OrderedDict()
        self._symbols: set[Symbol] = set()  # every symbol asked for: sizes the chunk cache
        self._times_cache: dict[tuple[int, int], list[datetime]] = {}  # the last range's

    @property
    def settings(self) -> SyntheticMarketSettings:
        return self._s

    @property
    def bar_interval(self) -> timedelta:
        return self._interval

    def history(
        self, symbols: Sequence[Symbol], end: datetime, count: int
    ) -> dict[Symbol, list[Bar]]:
        return self.history_batch(symbols, end, count).as_dict()

    def history_batch(self, symbols: Sequence[Symbol], end: datetime, count: int) -> BarBatch:
        hi = self._index_at_or_before(end)
        return self._batch(symbols, [max(0, hi - count + 1)] * len(symbols), hi)

    def bars_after(
        self, after: Mapping[Symbol, datetime], until: datetime
    ) -> dict[Symbol, list[Bar]]:
        return self.batch_after(after, until).as_dict()

    def batch_after(self, after: Mapping[Symbol, datetime], until: datetime) -> BarBatch:
        hi = self._index_at_or_before(until)
        # a rotation's symbols mostly share their last bar: one index per distinct time
        first = {t: max(0, self._index_at_or_before(t) + 1) for t in set(after.values())}
        return self._batch(list(after), list(map(first.__getitem__, after.values())), hi)

    def first_bar_time(self, symbols: Sequence[Symbol]) -> datetime | None:
        return None

    def last_bar_time(self, symbols: Sequence[Symbol]) -> datetime | None:
        return None

    def bar_time(self, n: int) -> datetime:
        """Close time of bar n."""
        return self._s.start + n * self._interval

    def true_regime(self, symbol: Symbol, time: datetime) -> int:
        """The regime (0 calm, 1 turbulent) generating the newest bar at or before `time`."""
        n = self._index_at_or_before(time)
        if n < 0:
            raise MarketDataError(
                f"no synthetic bar at or before {time.isoformat()}: bars start at "
                f"{self._s.start.isoformat()}"
            )
        return int(self._regimes(symbol, np.array([n], dtype=np.int64))[0])

    # -- indices and bars ------------------------------------------------------------

    def _index_at_or_before(self, t: datetime) -> int:
        return (utc(t) - self._s.start) // self._interval

    def _batch(self, symbols: Sequence[Symbol], los: list[int], hi: int) -> BarBatch:
        """Bars los[k]..hi of symbols[k]: one block of rows per symbol, the close times
        built once per distinct lo."""
        times = {lo: self._times(lo, hi) for lo in set(los)}
        shared = los[0] if len(times) == 1 else hi + 1  # every symbol's first bar, if one
        if shared <= hi and shared // CHUNK == hi // CHUNK:  # in one chunk: a warm update
            rows = slice(shared % CHUNK, hi % CHUNK + 1)
            blocks = self._rows_in_chunk(symbols, shared // CHUNK, rows)
        else:
            blocks = [self._rows(sym, lo, hi) for sym, lo in zip(symbols, los, strict=True)]
        return joined(symbols, list(map(times.__getitem__, los)), blocks)

    def _rows_in_chunk(self, symbols: Sequence[Symbol], k: int, rows: slice) -> list[F64]:
        """The same rows of chunk k of every symbol; once their chunks are cached, without
        a Python call per symbol (map runs them in C)."""
        keys = list(zip(symbols, repeat(k)))
        if not all(map(self._chunks.__contains__, keys)):
            return [self._chunk(symbol, k)[rows] for symbol in symbols]  # and build them
        for key in keys:
            self._chunks.move_to_end(key)  # used now, as _chunk marks them
        return list(map(itemgetter(rows), map(self._chunks.__getitem__, keys)))

    def _times(self, lo: int, hi: int) -> list[datetime]:
        """Close times of bars lo..hi (timedelta arithmetic is exact: same as bar_time)."""
        key = (lo, hi)
        if key not in self._times_cache:
            first, step = self.bar_time(lo), self._interval
            self._times_cache = {key: [first + i * step for i in range(hi - lo + 1)]}
        return self._times_cache[key]

    def _rows(self, symbol: Symbol, lo: int, hi: int) -> F64:
        """Bars lo..hi, one row each: a view into their chunk where they fit in one (a warm
        update's one new bar always does)."""
        if hi < lo:
            return _NO_ROWS
        first, last, start = lo // CHUNK, hi // CHUNK, lo % CHUNK
        if first == last:
            return self._chunk(symbol, first)[start : start + hi - lo + 1]
        parts = np.concatenate([self._chunk(symbol, k) for k in range(first, last + 1)])
        return parts[start : start + hi - lo + 1]

    # -- chunks ----------------------------------------------------------------------

    def _chunk(self, symbol: Symbol, k: int) -> F64:
        key = (symbol, k)
        cached = self._chunks.get(key)
        if cached is not None:
            self._chunks.move_to_end(key)
            return cached
        bars = self._build_chunk(symbol, k)
        self._chunks[key] = bars
        self._symbols.add(symbol)
        if len(self._chunks) > len(self._symbols) + _CHUNK_CACHE_SLACK:
            self._chunks.popitem(last=False)
        return bars

    def _build_chunk(self, symbol: Symbol, k: int) -> F64:
        """Chunk k of `symbol`: one row per bar, the columns of bar_batch.BarBatch.values."""
        n = np.arange(k * CHUNK, (k + 1) * CHUNK, dtype=np.int64)
        base = self._log_price_before_chunk(symbol, k)
        log_close = self._chunk_log_closes(symbol, n, base)
        log_open = np.concatenate(([base], log_close[:-1]))
        return np.column_stack(self._ohlcv(symbol, n, log_open, log_close))

    def _chunk_log_closes(self, symbol: Symbol, n: I64, base: float) -> F64:
        """Log closes of one chunk; identical however and whenever it is computed."""
        regimes = self._regimes(symbol, n)
        drift = np.where(regimes == TURBULENT, self._s.turbulent_drift, self._s.calm_drift)
        z = _normal(self._s.seed, symbol, "return", n)
        return base + np.cumsum(drift + self._vols(regimes) * z)

    def _log_price_before_chunk(self, symbol: Symbol, k: int) -> float:
        """Log close of bar k * CHUNK - 1, extending the chunk-end cache as needed."""
        ends = self._chunk_ends.setdefault(symbol, [])
        while len(ends) < k:
            j = len(ends)
            base = ends[-1] if ends else math.log(self._s.start_price)
            n = np.arange(j * CHUNK, (j + 1) * CHUNK, dtype=np.int64)
            ends.append(float(self._chunk_log_closes(symbol, n, base)[-1]))
        return ends[k - 1] if k > 0 else math.log(self._s.start_price)

    def _regimes(self, symbol: Symbol, n: I64) -> I64:
        segments = n // self._s.segment_bars
        u = _uniform(_stream_key(self._s.seed, symbol, "regime"), segments)
        return (u < self._s.p_turbulent).astype(np.int64)

    def _vols(self, regimes: I64) -> F64:
        return np.where(regimes == TURBULENT, self._s.turbulent_vol, self._s.calm_vol)

    def _ohlcv(self, symbol: Symbol, n: I64, log_open: F64, log_close: F64) -> _BarArrays:
        with np.errstate(over="ignore"):  # extreme settings overflow to inf: bar_checks
            return self._ohlcv_columns(symbol, n, log_open, log_close)  # rejects those bars

    def _ohlcv_columns(self, symbol: Symbol, n: I64, log_open: F64, log_close: F64) -> _BarArrays:
        seed, vols = self._s.seed, self._vols(self._regimes(symbol, n))
        up = 0.5 * vols * np.abs(_normal(seed, symbol, "high", n))
        down = 0.5 * vols * np.abs(_normal(seed, symbol, "low", n))
        high = np.exp(np.maximum(log_open, log_close) + up)
        low = np.exp(np.minimum(log_open, log_close) - down)
        activity = vols / self._s.calm_vol  # turbulent bars trade more
        volume = self._s.base_volume * activity * np.exp(0.3 * _normal(seed, symbol, "volume", n))
        o, c = np.exp(log_open), np.exp(log_close)
        return _BarArrays(o, np.maximum(high, np.maximum(o, c)),
                          np.minimum(low, np.minimum(o, c)), c, np.round(volume))
