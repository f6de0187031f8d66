"""Profit and loss of an account, from its equity marks (service.state.status_reads).

Every mark is taken at an update's broker snapshot, so the figures compare like with like:

- since start: equity now - the equity of the first update on record (the database's
  first, before that update's orders);
- today: equity now - the equity of the last update before the trading day of the last
  update began. The day is the America/New_York calendar day of the last update's bar
  (Alpaca trades US equities; midnight there, daylight saving time included), not the
  wall clock's: a replay of 2026-01-05 reports 2026-01-05. Where the history starts that
  day, the baseline is the first update;
- unrealised: the open positions' gain, sum of qty x (last close - average entry price),
  a position without a last close counting 0; over a period, its change (now less at the
  baseline);
- realised: the period's total less its unrealised change: closed trades, and anything
  else that moved cash (fees, dividends). Unknown (None), with the unrealised change,
  where the baseline's checkpoint is pruned and the account was not flat then.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, time
from typing import Any
from zoneinfo import ZoneInfo

from service.state.status_reads import EquityMark, Holding

TRADING_ZONE = ZoneInfo("America/New_York")


def trading_day_start(bar_time: datetime) -> datetime:
    """Midnight in New York of the day `bar_time` falls on there, in UTC."""
    day = bar_time.astimezone(TRADING_ZONE).date()
    return datetime.combine(day, time(0), tzinfo=TRADING_ZONE).astimezone(UTC)


def unrealised(holdings: Iterable[Holding], closes: dict[str, float | None]) -> float:
    return sum(position_unrealised(h, closes.get(h.symbol)) or 0.0 for h in holdings)


def position_unrealised(holding: Holding, close: float | None) -> float | None:
    return None if close is None else holding.qty * (close - holding.avg_entry_price)


def pnl(
    equity: float, unrealised_now: float | None, first: EquityMark | None,
    day_base: EquityMark | None, day_of: datetime,
) -> dict[str, Any]:
    """The `pnl` object: `since_start` and `today`, each None without a baseline."""
    today = _period(equity, unrealised_now, day_base or first)
    if today is not None:
        today["day"] = day_of.astimezone(TRADING_ZONE).date().isoformat()
    return {"since_start": _period(equity, unrealised_now, first), "today": today}


def _period(equity: float, unrealised_now: float | None,
            base: EquityMark | None) -> dict[str, Any] | None:
    if base is None:
        return None
    total = equity - base.equity
    change = (None if unrealised_now is None or base.unrealised is None
              else unrealised_now - base.unrealised)
    return {
        "total": round(total, 2),
        "realised": None if change is None else round(total - change, 2),
        "unrealised": None if change is None else round(change, 2),
        "from_seq": base.seq,
        "from_bar_time": base.bar_time.isoformat(),
        "from_equity": base.equity,
    }
