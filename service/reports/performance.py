"""Performance figures of an equity curve. Pure numerics over numpy arrays, no I/O.

Definitions (docs/reports.md says the same for the operator):

- Per-bar returns are simple: r_i = E_i / E_{i-1} - 1, over consecutive bars.
- total return = E_last / E_first - 1.
- CAGR = (E_last / E_first) ** (1 / years) - 1, years = calendar time from the first bar to
  the last / 365.25 days. None with one bar (no time passed), a non-positive equity, or a
  result too large for a float (a span of minutes annualised).
- Annualisation of Sharpe and Sortino is by the OBSERVED bar rate: periods per year =
  (number of returns) / years. Daily bars of a stock market come out near 252 a year and
  minute bars of one session near 98,000 a year over many days, because nights, weekends
  and holidays count as they did in the data; a fixed 252 or the median bar spacing would
  be wrong for one of the two.
- Sharpe = mean(r) / sd(r) * sqrt(periods per year), sd with ddof=1, risk-free rate 0.
  None with fewer than two returns or a zero sd (a flat curve).
- Sortino = mean(r) / downside deviation * sqrt(periods per year), downside deviation =
  sqrt(mean(min(r, 0) ** 2)) over ALL returns (target 0). None with no negative return.
- Drawdown at bar t = E_t / max(E_0..E_t) - 1, a fraction <= 0. The maximum drawdown is
  the most negative one; its peak is the bar of the running maximum before the trough,
  its recovery the first bar after the trough back at or above the peak's equity (None
  if it never got back). A curve that never falls has a maximum drawdown of 0 and no
  dates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
SECONDS_PER_YEAR = 365.25 * 86_400.0


@dataclass(frozen=True)
class Drawdown:
    depth: float  # <= 0: the worst E_t / running peak - 1
    peak: datetime | None
    trough: datetime | None
    recovery: datetime | None  # None: not back at the peak by the last bar


@dataclass(frozen=True)
class CurveFigures:
    """What one equity curve says, whatever produced it (the strategy, buy-and-hold)."""

    total_return: float
    cagr: float | None
    sharpe: float | None
    sortino: float | None
    max_drawdown: Drawdown


def as_curve(equity: Sequence[float] | FloatArray) -> FloatArray:
    curve = np.asarray(equity, dtype=np.float64)
    if curve.ndim != 1:
        raise ValueError(f"an equity curve is one-dimensional, got shape {curve.shape}")
    return curve


def simple_returns(equity: FloatArray) -> FloatArray:
    return equity[1:] / equity[:-1] - 1.0


def drawdown_series(equity: FloatArray) -> FloatArray:
    """E_t / max(E_0..E_t) - 1 at every bar (0 at new highs)."""
    if equity.size == 0:
        return equity.copy()
    return equity / np.maximum.accumulate(equity) - 1.0


def years_between(times: Sequence[datetime]) -> float:
    if len(times) < 2:
        return 0.0
    return (times[-1] - times[0]).total_seconds() / SECONDS_PER_YEAR


def periods_per_year(times: Sequence[datetime]) -> float | None:
    """The observed bar rate: returns per calendar year of the data (module docstring)."""
    years = years_between(times)
    return (len(times) - 1) / years if years > 0 else None


def cagr(times: Sequence[datetime], equity: FloatArray) -> float | None:
    years = years_between(times)
    if years <= 0 or equity.size < 2 or equity[0] <= 0 or equity[-1] <= 0:
        return None
    try:
        return math.expm1(math.log(equity[-1] / equity[0]) / years)
    except OverflowError:  # minutes of gain raised to a year's power: not a figure
        return None


def sharpe(returns: FloatArray, per_year: float | None) -> float | None:
    if per_year is None or returns.size < 2:
        return None
    sd = float(returns.std(ddof=1))
    if not sd > 0:
        return None
    return float(returns.mean()) / sd * math.sqrt(per_year)


def sortino(returns: FloatArray, per_year: float | None) -> float | None:
    if per_year is None or returns.size == 0:
        return None
    downside = math.sqrt(float(np.mean(np.minimum(returns, 0.0) ** 2)))
    if not downside > 0:
        return None
    return float(returns.mean()) / downside * math.sqrt(per_year)


def max_drawdown(times: Sequence[datetime], equity: FloatArray) -> Drawdown:
    drawdowns = drawdown_series(equity)
    if drawdowns.size == 0 or float(drawdowns.min()) >= 0.0:
        return Drawdown(0.0, None, None, None)
    trough = int(np.argmin(drawdowns))
    peak = int(np.argmax(equity[: trough + 1]))  # the first bar at the running maximum
    back = np.nonzero(equity[trough:] >= equity[peak])[0]
    recovery = times[trough + int(back[0])] if back.size else None
    return Drawdown(float(drawdowns[trough]), times[peak], times[trough], recovery)


def curve_figures(times: Sequence[datetime], equity: Sequence[float] | FloatArray) -> CurveFigures:
    """Every figure of one curve; `times` are its bars' (timezone-aware) times."""
    curve = as_curve(equity)
    if len(times) != curve.size:
        raise ValueError(f"{len(times)} bar times for {curve.size} equity values")
    if curve.size == 0:
        return CurveFigures(0.0, None, None, None, Drawdown(0.0, None, None, None))
    returns = simple_returns(curve)
    per_year = periods_per_year(times)
    return CurveFigures(
        total_return=float(curve[-1] / curve[0] - 1.0),
        cagr=cagr(times, curve),
        sharpe=sharpe(returns, per_year),
        sortino=sortino(returns, per_year),
        max_drawdown=max_drawdown(times, curve),
    )


def regime_shares(regimes: Sequence[int]) -> dict[int, float]:
    """Share of instrument-bars in each regime (0 = calmest): counts / all rows."""
    if not regimes:
        return {}
    labels, counts = np.unique(np.asarray(regimes, dtype=np.int64), return_counts=True)
    total = float(counts.sum())
    return {int(label): float(count) / total for label, count in zip(labels, counts, strict=True)}
