"""The daily P&L message, from each account's equity per update (service/state/history).

The day is the market day of the account's newest update (UTC): its P&L is the newest
equity less the equity at the last update before that day began (or at the first update,
if the run began that day); since start, less the equity at the first update (recorded
before any order of the run filled). Pure: the histories come in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, time
from typing import Any

from service.alerts.message import Alert
from service.state.history import EquityPoint


def daily_pnl(histories: Mapping[str, Sequence[EquityPoint]], at: datetime) -> Alert:
    details = {account: account_pnl(points) for account, points in histories.items()}
    parts = [_line(account, row) for account, row in details.items()]
    summary = "daily P&L: " + ("; ".join(parts) if parts else "no accounts")
    when = at.astimezone(UTC).isoformat().replace("+00:00", "Z")  # as log timestamps are
    return Alert("daily_pnl", None, when, summary, {"accounts": details})


def account_pnl(points: Sequence[EquityPoint]) -> dict[str, Any]:
    if not points:
        return {"updates": 0}
    first, last = points[0], points[-1]
    day_start = datetime.combine(last.bar_time.astimezone(UTC).date(), time(tzinfo=UTC))
    before = [p for p in points if p.bar_time < day_start]
    opening = before[-1] if before else first
    return {
        "equity": round(last.equity, 2),
        "day_pnl": round(last.equity - opening.equity, 2),
        "total_pnl": round(last.equity - first.equity, 2),
        "start_equity": round(first.equity, 2),
        "day": day_start.date().isoformat(),
        "seq": last.seq,
        "bar_time": last.bar_time.isoformat(),
    }


def _line(account: str, row: Mapping[str, Any]) -> str:
    if not row.get("updates", 1):
        return f"{account} no updates yet"
    return (f"{account} {row['equity']:,.2f} ({row['day_pnl']:+,.2f} on {row['day']}, "
            f"{row['total_pnl']:+,.2f} since start)")
