"""Buy-and-hold of the rotation, the benchmark beside the strategy. Pure, no I/O.

Definition (docs/reports.md): the starting equity E_0 is split equally over the N symbols
the account's history has closes for; each 1/N is bought at the symbol's first recorded
close and held to the end, with no fee (none is charged: service.reports.trading). Until
a symbol's first close its share is cash. At each update (seq) a symbol is valued at its
last close at or before that seq, so a rotation that refreshes a slice of the symbols per
update carries the others' closes forward. Value_t = E_0 / N x sum_i close_i(t) / close_i(first).

Its trading figures: N trades (one purchase per symbol), turnover = E_0 / mean value, costs
0, and each symbol's holding is one round trip closed at its last close, so the hit rate
is the share of symbols that ended above their first close.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from service.reports.performance import FloatArray
from service.reports.trading import TradingFigures, hit_rate, turnover

Closes = Mapping[str, Sequence[tuple[int, float]]]  # symbol -> (seq, close), seq ascending


def _ratios(seqs: Sequence[int], closes: Sequence[tuple[int, float]]) -> FloatArray:
    """close(last at or before each seq) / first close; 1 before the first close."""
    at = np.asarray([s for s, _ in closes], dtype=np.int64)
    price = np.asarray([c for _, c in closes], dtype=np.float64)
    index = np.searchsorted(at, np.asarray(seqs, dtype=np.int64), side="right") - 1
    ratio = price[np.maximum(index, 0)] / price[0]
    return np.where(index >= 0, ratio, 1.0)


def buy_and_hold_curve(seqs: Sequence[int], closes: Closes, start_equity: float) -> FloatArray:
    """The benchmark's value at each of `seqs` (ascending); flat E_0 without any close."""
    held = [c for c in closes.values() if c]
    if not held:
        return np.full(len(seqs), float(start_equity))
    ratios = np.stack([_ratios(seqs, c) for c in held])
    curve: FloatArray = float(start_equity) * ratios.mean(axis=0)
    return curve


def buy_and_hold_trading(
    closes: Closes, curve: FloatArray, start_equity: float
) -> TradingFigures:
    held = [c for c in closes.values() if c]
    gains = [c[-1][1] - c[0][1] for c in held]
    mean_value = float(curve.mean()) if curve.size else 0.0
    return TradingFigures(
        turnover=turnover(float(start_equity), mean_value) if held else 0.0,
        costs=0.0,
        trades=len(held),
        round_trips=len(held),
        hit_rate=hit_rate(gains),
    )
