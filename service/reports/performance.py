"""Performance figures of an equity curve. Pure numerics over numpy arrays, no I/O.

Definitions (docs/reports.md says the same for the operator):

- Per-bar returns are simple: r_i = E_i / E_{i-1} - 1, over consecutive bars.
- total return = E_last / E_first - 1.
- CAGR = (E_last / E_first) ** (1 / years) - 1, years = calendar time from the first bar to
  the last / 365.25 days.
- Annualisation of Sharpe and Sortino is by the OBSERVED bar rate: periods per year =
  (number of returns) / years. Daily bars of a stock market come out near 252 a year and
  minute bars of one session near 98,000 a year over many days, because nights, weekends
  and holidays count as they did in the data; a fixed 252 or the median bar spacing would
  be wrong for one of the two.
- Sharpe = mean(r) / sd(r) * sqrt(periods per year), sd with ddof=1, risk-free rate 0.
- Sortino = mean(r) / downside deviation * sqrt(periods per year), downside deviation =
  sqrt(mean(min(r, 0) ** 2)) over ALL returns (target 0).
- The annualised figures (CAGR, Sharpe, Sortino) are None, with the reason in
  CurveFigures.undefined, when the data cannot support a yearly figure:
  - a span under MIN_ANNUALISED_DAYS (30) calendar days from the first bar to the last:
    raising a short run to a year's power is extrapolation, not measurement (41 updates
    over 75 minutes, up 0.03 %, "are" a CAGR of 943 %, and their 40 returns a Sharpe of
    90 whose standard error, about sqrt(periods per year / returns) = 84, is as large);
  - Sharpe and Sortino also under MIN_RETURNS (30) returns: the mean and the deviation of
    fewer are noise (six weeks of daily bars, or a month of anything finer, pass both);
  - otherwise when the figure itself is undefined: a non-positive equity, or a result too
    large for a float (CAGR); a zero sd, i.e. a flat curve (Sharpe); no negative return
    (Sortino).
  The total return and the drawdown need no span and are always given.
- Drawdown at bar t = E_t / max(E_0..E_t) - 1, a fraction <= 0. The maximum drawdown is
  the most negative one; its peak is the bar of the running maximum before the trough,
  its recovery the first bar after the trough back at or above the peak's equity (None
  if it never got back). A curve that never falls has a maximum drawdown of 0 and no
  dates.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
SECONDS_PER_YEAR = 365.25 * 86_400.0
MIN_ANNUALISED_DAYS = 30  # calendar days from the first bar to the last, for CAGR, Sharpe, Sortino
MIN_RETURNS = 30  # returns, for Sharpe and Sortino


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
    # why a figure is None: "cagr", "sharpe", "sortino" -> a short reason for a reader
    # ("under 30 days"), present exactly for those that are None
    undefined: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Undefined:
    """A figure that the data cannot give, and why (shown as "n/a (why)")."""

    reason: str


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


def short_span(times: Sequence[datetime]) -> Undefined | None:
    """Why the bars' span is too short to annualise (module docstring); None if it is not."""
    if len(times) < 2:
        return Undefined("one bar")
    if (times[-1] - times[0]).total_seconds() < MIN_ANNUALISED_DAYS * 86_400.0:
        return Undefined(f"under {MIN_ANNUALISED_DAYS} days")
    return None


def cagr(times: Sequence[datetime], equity: FloatArray) -> float | Undefined:
    short = short_span(times)
    if short is not None:
        return short
    if equity[0] <= 0 or equity[-1] <= 0:
        return Undefined("equity at or below 0")
    try:
        return math.expm1(math.log(equity[-1] / equity[0]) / years_between(times))
    except OverflowError:
        return Undefined("too large for a float")


def _ratio_inputs(times: Sequence[datetime], returns: FloatArray) -> tuple[float, Undefined | None]:
    """The periods per year for Sharpe and Sortino, or why they are not given."""
    short = short_span(times)
    if short is not None:
        return 0.0, short
    if returns.size < MIN_RETURNS:
        return 0.0, Undefined(f"under {MIN_RETURNS} returns")
    return float(periods_per_year(times) or 0.0), None


def sharpe(times: Sequence[datetime], returns: FloatArray) -> float | Undefined:
    per_year, why = _ratio_inputs(times, returns)
    if why is not None:
        return why
    sd = float(returns.std(ddof=1))
    if not sd > 0:
        return Undefined("a flat curve")
    return float(returns.mean()) / sd * math.sqrt(per_year)


def sortino(times: Sequence[datetime], returns: FloatArray) -> float | Undefined:
    per_year, why = _ratio_inputs(times, returns)
    if why is not None:
        return why
    downside = math.sqrt(float(np.mean(np.minimum(returns, 0.0) ** 2)))
    if not downside > 0:
        return Undefined("no losing bar")
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
        none = dict.fromkeys(("cagr", "sharpe", "sortino"), "no bar")
        return CurveFigures(0.0, None, None, None, Drawdown(0.0, None, None, None), none)
    returns = simple_returns(curve)
    annualised = {"cagr": cagr(times, curve), "sharpe": sharpe(times, returns),
                  "sortino": sortino(times, returns)}  # fmt: skip
    values = {k: None if isinstance(v, Undefined) else v for k, v in annualised.items()}
    return CurveFigures(
        total_return=float(curve[-1] / curve[0] - 1.0),
        cagr=values["cagr"],
        sharpe=values["sharpe"],
        sortino=values["sortino"],
        max_drawdown=max_drawdown(times, curve),
        undefined={k: v.reason for k, v in annualised.items() if isinstance(v, Undefined)},
    )


def regime_shares(regimes: Sequence[int]) -> dict[int, float]:
    """Share of instrument-bars in each regime (0 = calmest): counts / all rows."""
    if not regimes:
        return {}
    labels, counts = np.unique(np.asarray(regimes, dtype=np.int64), return_counts=True)
    total = float(counts.sum())
    return {int(label): float(count) / total for label, count in zip(labels, counts, strict=True)}
