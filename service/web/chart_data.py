"""The one data object the charts draw: built from an account's state database.

`RegimeCharts.render(container, data)` (service/web/charts.js) draws it, in the report
page (`regime-trader report`, inlined) and in the live dashboard (`/api/charts?account=A`,
fetched). Times are unix seconds (UTC); fractions are fractions (0.05 is 5 %); tables are
text cells, formatted here once for every page. The shape, version 1:

    {
      "version": 1,
      "kind": "account",
      "account": "alpha",
      "generated_at": "2026-12-01T10:00:00+00:00",
      "period": "2025-03-03 14:30 UTC to 2025-03-03 16:59 UTC, 22 updates",
      "equity": {                      # one entry per update (seq), thinned (below)
        "t": [1741012200, ...],        # the update's bar time
        "equity": [100000.0, ...],     # the account's equity at that update
        "drawdown": [0.0, -0.0012, ...],   # equity / running peak - 1 (<= 0)
        "buy_hold": [100000.0, ...]    # equal-weight buy-and-hold of the rotation
      },
      "summary": {"columns": ["figure", "strategy", "buy & hold"], "rows": [[...], ...]},
      "figures": {...},                # the same summary as numbers (`report --json`)
      "positions": {"columns": [...], "rows": [[...], ...]},   # per symbol, last update
      "orders": {"columns": [...], "rows": [[...], ...]},      # newest first
      "instruments": [                 # one per symbol, its modelled updates only
        {"symbol": "SPY", "t": [...], "close": [...],
         "p_turbulent": [...],         # posterior mean P(most turbulent regime)
         "p_lo": [...], "p_hi": [...], # p_turbulent -/+ 2 posterior sd, clipped to [0, 1]
         "converged": [1, 0, ...]}     # the convergence gate at that update
      ]
    }

Long histories are thinned to at most service.reports.page.MAX_POINTS (5,000) values per
series (every k-th update, the last always kept) so a page stays small; the figures are
computed on every update first.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from service.reports.account_history import (
    AccountHistory,
    account_series,
    read_account_history,
)
from service.reports.page import thin
from service.reports.performance import drawdown_series
from service.reports.summary import Summary, benchmark_curve, summarise, summary_json
from service.reports.summary_table import Table, period_text, summary_table
from service.state.history import InstrumentPoint

VERSION = 1
RECENT_ORDERS = 50
BAND_SDS = 2.0  # the uncertainty band: p_turbulent -/+ 2 posterior sd


def account_chart_data(
    account: str, database: Path, now: datetime | None = None, orders: int = RECENT_ORDERS
) -> dict[str, Any]:
    """The data object of `account` (its database at `database`). NoHistoryError (from
    service.reports.account_history) when there is nothing to draw yet."""
    history = read_account_history(account, database)
    return chart_data_of(history, summarise(account_series(history)), now, orders)


def chart_data_of(
    history: AccountHistory, summary: Summary, now: datetime | None = None,
    orders: int = RECENT_ORDERS,
) -> dict[str, Any]:  # fmt: skip
    return {
        "version": VERSION,
        "kind": "account",
        "account": history.account,
        "generated_at": (now or datetime.now(UTC)).isoformat(),
        "period": period_text(summary),
        "equity": equity_block(history),
        "summary": table_json(summary_table(summary)),
        "figures": summary_json(summary),
        "positions": table_json(positions_table(history.instruments)),
        "orders": table_json(orders_table(history, orders)),
        "instruments": instrument_blocks(history.instruments),
    }


def table_json(table: Table) -> dict[str, Any]:
    return {"columns": list(table.columns), "rows": [list(r) for r in table.rows]}


def _rounded(values: Sequence[float], digits: int) -> list[float | None]:
    return [round(v, digits) if np.isfinite(v) else None for v in values]


def equity_block(history: AccountHistory) -> dict[str, list[Any]]:
    equity = np.asarray([p.equity for p in history.equity], dtype=np.float64)
    series: dict[str, list[Any]] = {
        "t": [int(p.bar_time.timestamp()) for p in history.equity],
        "equity": _rounded(equity.tolist(), 2),
        "drawdown": _rounded(drawdown_series(equity).tolist(), 6),
        "buy_hold": _rounded(benchmark_curve(account_series(history)).tolist(), 2),
    }
    return {name: thin(values) for name, values in series.items()}


def instrument_block(symbol: str, points: Sequence[InstrumentPoint]) -> dict[str, Any]:
    p = np.asarray([x.p_turbulent for x in points], dtype=np.float64)
    sd = np.nan_to_num(np.asarray([x.p_turbulent_sd for x in points], dtype=np.float64))
    series: dict[str, list[Any]] = {
        "t": [int(x.bar_time.timestamp()) for x in points],
        "close": _rounded([x.close for x in points], 6),
        "p_turbulent": _rounded(p.tolist(), 4),
        "p_lo": _rounded(np.clip(p - BAND_SDS * sd, 0.0, 1.0).tolist(), 4),
        "p_hi": _rounded(np.clip(p + BAND_SDS * sd, 0.0, 1.0).tolist(), 4),
        "converged": [int(x.converged) for x in points],
    }
    return {"symbol": symbol, **{name: thin(values) for name, values in series.items()}}


def by_symbol(points: Sequence[InstrumentPoint]) -> dict[str, list[InstrumentPoint]]:
    grouped: dict[str, list[InstrumentPoint]] = {}
    for point in points:
        grouped.setdefault(point.symbol, []).append(point)
    return dict(sorted(grouped.items()))


def instrument_blocks(points: Sequence[InstrumentPoint]) -> list[dict[str, Any]]:
    return [instrument_block(symbol, rows) for symbol, rows in by_symbol(points).items()]


POSITION_COLUMNS = ("symbol", "position", "last close", "value", "target", "regime",
                    "P(turbulent)", "converged", "as of update")  # fmt: skip
ORDER_COLUMNS = ("update", "bar time", "symbol", "side", "qty", "status", "filled",
                 "avg fill price")  # fmt: skip


def positions_table(points: Sequence[InstrumentPoint]) -> Table:
    """Per symbol, what its last modelled update recorded: position, target, regime."""
    rows = tuple(
        (s, f"{x.position_qty:g}", f"{x.close:,.4f}", f"{x.position_qty * x.close:,.2f}",
         f"{x.target_qty:g}", str(x.regime), f"{x.p_turbulent:.3f}",
         "yes" if x.converged else "no", str(x.seq))
        for s, x in ((s, rows[-1]) for s, rows in by_symbol(points).items())
    )  # fmt: skip
    return Table(POSITION_COLUMNS, rows)


def orders_table(history: AccountHistory, limit: int) -> Table:
    bar_times = {p.seq: p.bar_time.strftime("%Y-%m-%d %H:%M") for p in history.equity}
    rows = tuple(
        (str(o.seq), bar_times.get(o.seq, ""), o.symbol, o.side, f"{o.qty:g}", o.status,
         f"{o.filled_qty:g}", "" if o.filled_avg_price is None else f"{o.filled_avg_price:,.4f}")
        for o in history.orders[:limit]
    )  # fmt: skip
    return Table(ORDER_COLUMNS, rows)
