"""The simulated broker's prices: the latest close at or before the bar in hand, and what
the open buys commit of the cash at those closes.

Prices do not move within one now(): an update asks for every position's close at its
snapshot, then for each order's at its buying-power check, so each close is read from the
market once per bar, as columns (history_batch: no Bar object per position). The open
buys' cost is what each buy's check subtracts from the cash; summed afresh for each order,
an update's checks were quadratic in its orders, so it is kept as buys are accepted, with
the same additions in the same order as summing it afresh (the same float, bit for bit).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from datetime import datetime
from types import MappingProxyType

from service.market.bar_batch import CLOSE, BarBatch
from service.market.base import MarketFeed
from service.types import Symbol


def last_closes(batch: BarBatch) -> dict[Symbol, float]:
    """Each symbol's last close in the batch; a symbol without a bar has none."""
    closes = batch.values[:, CLOSE].tolist()
    ends = batch.bounds
    return {symbol: closes[ends[k + 1] - 1] for k, symbol in enumerate(batch.symbols)
            if ends[k + 1] > ends[k]}  # fmt: skip


class LatestCloses:
    """The latest close at or before `now` per symbol, read once per `now`."""

    def __init__(self, market: MarketFeed) -> None:
        self._market = market
        self._marks: dict[Symbol, float] = {}
        self._at: datetime | None = None

    def of(self, symbols: Sequence[Symbol], now: datetime) -> Mapping[Symbol, float]:
        """The latest close at or before `now` of each of `symbols` that has one (and of
        other symbols asked at this `now`: a mapping to read, not to list)."""
        if now != self._at:
            self._marks, self._at = {}, now
        marks = self._marks
        missing = [s for s in symbols if s not in marks]
        if missing:  # a symbol without a price is asked again: it may have one by now
            marks.update(last_closes(self._market.history_batch(missing, now, 1)))
        return MappingProxyType(marks)

    def close(self, symbol: Symbol, now: datetime) -> float | None:
        return self.of([symbol], now).get(symbol)


class OpenBuyCost:
    """The open buys' cost: per symbol in symbol order, its open quantity times its close
    (0.0 without one), added left to right. `total` is that sum; `set` changes one
    symbol's quantity and adds again only from that symbol on (an update's buys mostly
    come in symbol order, after every open one: one addition each)."""

    def __init__(self, open_buys: list[tuple[Symbol, float]], marks: Mapping[Symbol, float]):
        """`open_buys`: (symbol, open quantity) in symbol order (AccountView.open_buys)."""
        self._symbols = [symbol for symbol, _ in open_buys]
        self._terms = [qty * marks.get(symbol, 0.0) for symbol, qty in open_buys]
        self._sums: list[float] = []
        self._add_from(0)

    @property
    def total(self) -> float:
        return self._sums[-1] if self._sums else 0.0

    def set(self, symbol: Symbol, qty: float, close: float) -> None:
        """`symbol`'s open buys now total `qty`, priced at `close`."""
        i = bisect_left(self._symbols, symbol)
        if i < len(self._symbols) and self._symbols[i] == symbol:
            self._terms[i] = qty * close
        else:
            self._symbols.insert(i, symbol)
            self._terms.insert(i, qty * close)
        self._add_from(i)

    def _add_from(self, i: int) -> None:
        # sum() starts from int 0 and 0 + x == x for every term (none is -0.0: a quantity
        # is positive and a close is positive or 0.0), so the partial sums are sum()'s
        del self._sums[i:]
        total = self._sums[-1] if self._sums else 0.0
        for term in self._terms[i:]:
            total += term
            self._sums.append(total)
