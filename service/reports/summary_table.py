"""The summary as a table of text cells: one formatting for the HTML report, the dashboard
(both through service.web.chart_data) and the text a backtest prints when it ends."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from service.reports.summary import Figures, Summary

DASH = "—"  # a figure that is undefined for this period (see service.reports.performance)
# An annualised figure the data cannot support shows why: "n/a (under 30 days)".
COLUMNS = ("figure", "strategy", "buy & hold")


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def pct(x: float | None) -> str:
    return DASH if x is None else f"{100.0 * x:.2f}%"


def ratio(x: float | None) -> str:
    return DASH if x is None else f"{x:.2f}"


def money(x: float | None) -> str:
    return DASH if x is None else f"{x:,.2f}"


def when(t: datetime | None) -> str:
    return DASH if t is None else t.strftime("%Y-%m-%d %H:%M UTC")


def annualised(name: str, fmt: Callable[[float | None], str]) -> Callable[[Figures], str]:
    """The cell of an annualised figure (cagr, sharpe, sortino): the value, else "n/a
    (why)" with the reason performance.curve_figures gave."""

    def cell(figures: Figures) -> str:
        value = getattr(figures.curve, name)
        if value is None and name in figures.curve.undefined:
            return f"n/a ({figures.curve.undefined[name]})"
        return fmt(value)

    return cell


# (label, how to read it from one column's figures): the rows both columns have.
_FIGURES: tuple[tuple[str, Callable[[Figures], str]], ...] = (
    ("total return", lambda s: pct(s.curve.total_return)),
    ("CAGR", annualised("cagr", pct)),
    ("Sharpe (annualised)", annualised("sharpe", ratio)),
    ("Sortino (annualised)", annualised("sortino", ratio)),
    ("maximum drawdown", lambda s: pct(s.curve.max_drawdown.depth)),
    ("drawdown peak", lambda s: when(s.curve.max_drawdown.peak)),
    ("drawdown trough", lambda s: when(s.curve.max_drawdown.trough)),
    ("drawdown recovered", lambda s: when(s.curve.max_drawdown.recovery)),
    ("turnover", lambda s: ratio(s.trading.turnover)),
    ("costs", lambda s: money(s.trading.costs)),
    ("trades (filled orders)", lambda s: str(s.trading.trades)),
    ("round trips", lambda s: str(s.trading.round_trips)),
    ("hit rate", lambda s: pct(s.trading.hit_rate)),
)


def summary_table(summary: Summary) -> Table:
    rows = [
        ("updates (bars)", str(summary.bars), str(summary.bars)),
        ("start equity", money(summary.start_equity), money(summary.start_equity)),
        ("end equity", money(summary.end_equity),
         money(_end_value(summary.start_equity, summary.buy_hold))),
        *((label, read(summary.strategy), read(summary.buy_hold)) for label, read in _FIGURES),
        *((f"time in regime {k}{' (calmest)' if k == 0 else ''}", pct(share), DASH)
          for k, share in sorted(summary.time_in_regime.items())),
    ]  # fmt: skip
    return Table(COLUMNS, tuple(rows))


def _end_value(start: float | None, figures: Figures) -> float | None:
    return None if start is None else start * (1.0 + figures.curve.total_return)


def table_text(table: Table) -> str:
    """Aligned plain text: the figure left, the values right."""
    widths = [max(len(row[i]) for row in (table.columns, *table.rows))
              for i in range(len(table.columns))]  # fmt: skip
    lines = [
        "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                  for i, (cell, w) in enumerate(zip(row, widths, strict=True))).rstrip()
        for row in (table.columns, *table.rows)
    ]  # fmt: skip
    return "\n".join(lines)


def period_text(summary: Summary) -> str:
    return f"{when(summary.first_bar)} to {when(summary.last_bar)}, {summary.bars} updates"


def summary_text(summary: Summary) -> str:
    return (f"summary of account {summary.account}: {period_text(summary)}\n"
            f"{table_text(summary_table(summary))}")
