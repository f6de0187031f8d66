"""One account's summary beside buy-and-hold: the figures, their JSON and their table.

Pure: the inputs are plain series (service.reports.account_history reads them from a
state database). The figures are defined in service.reports.performance (the curve),
service.reports.trading (the orders) and service.reports.buy_hold (the benchmark).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from service.reports.buy_hold import Closes, buy_and_hold_curve, buy_and_hold_trading
from service.reports.performance import (
    CurveFigures,
    FloatArray,
    as_curve,
    curve_figures,
    regime_shares,
)
from service.reports.trading import Fill, TradingFigures, trading_figures


@dataclass(frozen=True)
class AccountSeries:
    """What an account's history holds, as plain series (one entry per update in `seqs`,
    `times`, `equity`; `regimes` one per instrument-bar)."""

    account: str
    seqs: Sequence[int]
    times: Sequence[datetime]
    equity: Sequence[float]
    fills: Sequence[Fill]
    closes: Closes  # symbol -> (seq, close), ascending
    regimes: Sequence[int]


@dataclass(frozen=True)
class Figures:
    """The figures of one column of the summary (the strategy, or buy-and-hold)."""

    curve: CurveFigures
    trading: TradingFigures


@dataclass(frozen=True)
class Summary:
    account: str
    bars: int
    first_bar: datetime | None
    last_bar: datetime | None
    start_equity: float | None
    end_equity: float | None
    strategy: Figures
    buy_hold: Figures
    time_in_regime: dict[int, float]  # regime (0 = calmest) -> share of instrument-bars


def last_closes(closes: Closes) -> dict[str, float]:
    return {symbol: rows[-1][1] for symbol, rows in closes.items() if rows}


def benchmark_curve(series: AccountSeries) -> FloatArray:
    start = float(series.equity[0]) if len(series.equity) else 0.0
    return buy_and_hold_curve(series.seqs, series.closes, start)


def summarise(series: AccountSeries) -> Summary:
    equity = as_curve(series.equity)
    start = float(equity[0]) if equity.size else None
    bench = benchmark_curve(series)
    mean_equity = float(equity.mean()) if equity.size else 0.0
    return Summary(
        account=series.account,
        bars=int(equity.size),
        first_bar=series.times[0] if series.times else None,
        last_bar=series.times[-1] if series.times else None,
        start_equity=start,
        end_equity=float(equity[-1]) if equity.size else None,
        strategy=Figures(curve_figures(series.times, equity),
                         trading_figures(series.fills, mean_equity, last_closes(series.closes))),
        buy_hold=Figures(curve_figures(series.times, bench),
                         buy_and_hold_trading(series.closes, bench, start or 0.0)),
        time_in_regime=regime_shares(series.regimes),
    )  # fmt: skip


# -- JSON --------------------------------------------------------------------------------


def _when(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat()


def figures_json(figures: Figures) -> dict[str, Any]:
    c, t, dd = figures.curve, figures.trading, figures.curve.max_drawdown
    return {
        "total_return": c.total_return,
        "cagr": c.cagr,
        "sharpe": c.sharpe,
        "sortino": c.sortino,
        "max_drawdown": dd.depth,
        "max_drawdown_peak": _when(dd.peak),
        "max_drawdown_trough": _when(dd.trough),
        "max_drawdown_recovery": _when(dd.recovery),
        "turnover": t.turnover,
        "costs": t.costs,
        "trades": t.trades,
        "round_trips": t.round_trips,
        "hit_rate": t.hit_rate,
        "undefined": dict(sorted(c.undefined.items())),  # why cagr/sharpe/sortino are null
    }


def summary_json(summary: Summary) -> dict[str, Any]:
    """The summary as one JSON-ready object: the strategy's figures at the top level,
    buy-and-hold's under "buy_and_hold" (None where a figure is undefined; "undefined"
    says why, for the annualised figures: {"cagr": "under 30 days", ...})."""
    return {
        "account": summary.account,
        "bars": summary.bars,
        "first_bar": _when(summary.first_bar),
        "last_bar": _when(summary.last_bar),
        "start_equity": summary.start_equity,
        "end_equity": summary.end_equity,
        **figures_json(summary.strategy),
        "time_in_regime": {str(k): v for k, v in sorted(summary.time_in_regime.items())},
        "buy_and_hold": figures_json(summary.buy_hold),
    }
