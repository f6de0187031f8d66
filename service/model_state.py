"""What a worker knows about each instrument between updates: the model's inputs and
carries, the strategy's last decision, and where the rotation starts next.

Its checkpoint form (a model-state blob and a JSON book) is service.state.checkpoint_codec's.
"""

from __future__ import annotations

import hashlib
import operator
from dataclasses import dataclass, field
from datetime import datetime
from itertools import repeat

import numpy as np

from regime_model.update import InstrumentCarry
from service.market.bar_batch import CLOSE, BarBatch
from service.market.base import MarketFeed
from service.strategy import Decision, id_symbol_part, order_id_symbol
from service.types import Bar, BrokerSnapshot, Symbol

_LAST_BAR_TIME = operator.attrgetter("last_bar_time")
_LAST_CLOSE = operator.attrgetter("last_close")
_RETURNS = operator.attrgetter("returns")
_SYMBOL = operator.attrgetter("symbol")
SLIDE = 256  # updates a ReturnsTable serves before the next one (one copy of every window)


def instrument_key(symbol: Symbol) -> int:
    """A stable 32-bit key per symbol: the sampler's random streams are keyed by it."""
    return int.from_bytes(hashlib.blake2b(symbol.encode(), digest_size=4).digest(), "little")


@dataclass
class InstrumentState:
    symbol: Symbol
    returns: np.ndarray = field(default_factory=lambda: np.zeros(0))
    last_bar_time: datetime | None = None
    last_close: float | None = None
    carry: InstrumentCarry | None = None
    decision: Decision | None = None
    regime: int | None = None
    retiring: bool = False  # removed from the rotation; its position is being closed
    # Returns appended since the last checkpoint stored them (the newest `unsaved` of
    # `returns`, or all of them if more arrived than a window holds).
    unsaved: int = 0

    def append(self, bars: list[Bar], window: int) -> int:
        """Append bars newer than the last one seen; keep the last `window` returns."""
        fresh = [b for b in bars if self.last_bar_time is None or b.time > self.last_bar_time]
        closes = np.array([b.close for b in fresh], dtype=np.float64)
        if self.last_close is not None:
            closes = np.concatenate(([self.last_close], closes))
        if closes.size >= 2:
            logs = np.log(closes)  # np.diff's own arithmetic, without its per-call checks
            self.returns = np.concatenate((self.returns, logs[1:] - logs[:-1]))[-window:]
            self.unsaved += closes.size - 1
        if fresh:
            self.last_bar_time, self.last_close = fresh[-1].time, fresh[-1].close
        return len(fresh)


def take_new_bars(
    book: ModelState, market: MarketFeed, batch: tuple[Symbol, ...], bar_time: datetime,
    window: int,
) -> int:
    """New bars for the batch: everything since each symbol's last bar, or a full window of
    history for a symbol seen for the first time; returns the bars taken."""
    warm = {s: t for s in batch if (t := book.instruments[s].last_bar_time) is not None}
    cold = [s for s in batch if s not in warm]
    taken = 0
    if cold:  # as columns too: a window of history each, without a Bar per row
        taken += append_batch(book, market.history_batch(cold, bar_time, window + 1), window)
    if warm:  # as columns: all instruments' new bars checked and taken at once
        taken += append_batch(book, market.batch_after(warm, bar_time), window)
    return taken


def append_batch(book: ModelState, batch: BarBatch, window: int) -> int:
    """InstrumentState.append for every symbol of the batch; returns the bars taken. An
    instrument with one new bar (every instrument, in a warm update) is taken with the
    others in one numpy pass; one seen for the first time (a cold fetch's window of
    history) from its columns; any other count goes through append, bar by bar."""
    states = list(map(book.instruments.__getitem__, batch.symbols))
    if _one_new_bar_each(states, batch):  # a warm update: nothing to sort out
        return _append_singles(book, states, list(range(len(states))), batch, window)
    singles, rows, taken = [], [], 0  # the instruments with one new bar, and its row
    for k, state in enumerate(states):
        lo, hi = batch.bounds[k], batch.bounds[k + 1]
        if hi - lo == 1 and (state.last_bar_time is None or batch.times[lo] > state.last_bar_time):
            singles.append(state)
            rows.append(lo)
        elif hi > lo and state.last_bar_time is None:
            taken += _append_first(state, batch, lo, hi, window)
        elif hi > lo:
            taken += state.append(batch.bars(k), window)
    return taken + _append_singles(book, singles, rows, batch, window)


def _append_first(
    state: InstrumentState, batch: BarBatch, lo: int, hi: int, window: int
) -> int:
    """append's result for an instrument without bars yet, from rows lo:hi of the batch
    (all of them new, ascending in time): its closes' log differences, without a Bar per
    row. The closes are copied first, so np.log reads them as append's array of the same
    values (contiguous), which gives the same bits."""
    closes = np.ascontiguousarray(batch.values[lo:hi, CLOSE])
    if closes.size >= 2:
        logs = np.log(closes)
        state.returns = np.concatenate((state.returns, logs[1:] - logs[:-1]))[-window:]
        state.unsaved += closes.size - 1
    state.last_bar_time, state.last_close = batch.times[hi - 1], closes[-1].item()
    return hi - lo


def _one_new_bar_each(states: list[InstrumentState], batch: BarBatch) -> bool:
    """Every instrument has one bar, newer than its last: checked in C (map), without a
    Python step per instrument."""
    lasts = list(map(_LAST_BAR_TIME, states))
    return (batch.bounds == tuple(range(len(states) + 1)) and None not in lasts
            and all(map(operator.gt, batch.times, lasts)))


def _append_singles(
    book: ModelState, states: list[InstrumentState], rows: list[int], batch: BarBatch,
    window: int,
) -> int:
    """Each instrument's one new bar, newer than its last, taken as append takes it, for
    all of them at once: np.log gives each element the bits it gives it alone (its SIMD
    loop treats every lane alike; tests/service/test_append_batch.py holds it to that)."""
    if not states:
        return 0
    closes = batch.values[rows, CLOSE]
    before = list(map(_LAST_CLOSE, states))
    if None in before:  # an instrument's first bar has no return: only its close is kept
        followed = [j for j, close in enumerate(before) if close is not None]
        _extend(book, [states[j] for j in followed],
                np.log(closes[followed]) - np.log([before[j] for j in followed]), window)
    else:
        _extend(book, states, np.log(closes) - np.log(before), window)
    for state, row, close in zip(states, rows, closes.tolist(), strict=True):
        state.last_bar_time, state.last_close = batch.times[row], close
    return len(states)


def _extend(
    book: ModelState, states: list[InstrumentState], new: np.ndarray, window: int
) -> None:
    """One more return each, keeping the last `window`: append's concatenate-and-trim, or,
    when every window is full (every update once warm), a slide of the book's table."""
    held = list(map(_RETURNS, states))
    if window > 0 and set(map(len, held)) <= {window}:
        table = book.returns_table
        if table is None or table.window != window or not table.slid(held, new):
            table = book.returns_table = ReturnsTable([s.symbol for s in states], held, new,
                                                      window)
        for state, returns in zip(states, table.windows, strict=True):
            state.returns = returns
            state.unsaved += 1
        return
    for state, returns, one in zip(states, held, new[:, None], strict=True):
        state.returns = np.concatenate((returns, one))[-window:]
        state.unsaved += 1


class ReturnsTable:
    """The full windows of one list of instruments, kept from update to update in one
    buffer with room to slide: an update writes its new returns as one column and hands
    out views one column further on, instead of copying every window (most of a warm
    fetch's time at 268 instruments). A column is written before any view covers it and
    never after, and the views are read-only, so a window once handed out never changes."""

    def __init__(
        self, symbols: list[Symbol], held: list[np.ndarray], new: np.ndarray, window: int
    ) -> None:
        self.window, self.start = window, 0
        self.rows = {symbol: row for row, symbol in enumerate(symbols)}
        self.buffer = np.empty((len(held), window + SLIDE))
        for row, returns in zip(self.buffer, held, strict=True):
            row[: window - 1] = returns[1:]
        self.buffer[:, window - 1] = new
        self.windows = self._views()
        self.checks: object = None  # what checkpoints keep of the windows (window_sums.py)

    def slid(self, held: list[np.ndarray], new: np.ndarray) -> bool:
        """Append one return to each window, if `held` are this table's windows (the same
        instruments, none changed since) and the buffer has room; False if not."""
        end = self.start + self.window
        if (end == self.buffer.shape[1] or len(held) != len(self.windows)
                or not all(map(operator.is_, held, self.windows))):
            return False
        self.buffer[:, end] = new
        self.start += 1
        self.windows = self._views()
        return True

    def rows_of(self, instruments: list[InstrumentState]) -> list[int] | None:
        """The row of `view` holding each instrument's window, in their order, if each
        window is this table's view of its symbol (the instrument took its last return
        here); None if any is not."""
        rows = list(map(self.rows.get, map(_SYMBOL, instruments), repeat(-1)))
        if -1 in rows or not all(map(operator.is_, map(_RETURNS, instruments),
                                     map(self.windows.__getitem__, rows))):
            return None
        return rows

    @property
    def view(self) -> np.ndarray:
        """[rows, window] every window of the table, a view (no copy)."""
        return self.buffer[:, self.start : self.start + self.window]

    def _views(self) -> list[np.ndarray]:
        views = self.buffer[:, self.start : self.start + self.window]
        views.flags.writeable = False
        return list(views)


@dataclass
class ModelState:
    """One account's model and strategy state: per instrument, and the rotation's place."""

    instruments: dict[Symbol, InstrumentState]
    rotation_start: int = 0  # index of the first symbol of the next batch (rotation.py)
    # where warm updates' windows live (append_batch); not state: the windows are
    returns_table: ReturnsTable | None = field(default=None, repr=False, compare=False)

    def ensure(self, symbols: tuple[Symbol, ...]) -> None:
        for symbol in symbols:
            self.instruments.setdefault(symbol, InstrumentState(symbol)).retiring = False

    def sync_rotation(
        self, symbols: tuple[Symbol, ...], on_removal: str
    ) -> tuple[list[Symbol], list[Symbol]]:
        """Make the state match the rotation: new symbols start cold; a symbol no longer in
        it is closed out ("close": retiring until flat) or forgotten ("keep").
        Returns (added, removed)."""
        wanted = set(symbols)
        added = sorted(wanted - self.instruments.keys())
        removed = sorted(s for s, st in self.instruments.items()
                         if s not in wanted and not st.retiring)
        self.ensure(symbols)
        for symbol in removed:
            if on_removal == "close":
                self.instruments[symbol].retiring = True
            else:
                del self.instruments[symbol]
        return added, removed

    def saved(self) -> None:
        """A checkpoint committed every instrument's returns."""
        for instrument in self.instruments.values():
            instrument.unsaved = 0

    def retiring(self) -> list[Symbol]:
        return sorted(s for s, st in self.instruments.items() if st.retiring)

    def drop_flat(self, snapshot: BrokerSnapshot) -> list[Symbol]:
        """Forget retiring symbols the broker shows flat with no order working: their past
        stays in older checkpoints and the decisions table."""
        working = {id_symbol_part(o.client_order_id) for o in snapshot.open_orders}
        flat = [s for s in self.retiring()
                if snapshot.qty(s) == 0 and order_id_symbol(s) not in working]
        for symbol in flat:
            del self.instruments[symbol]
        return flat
