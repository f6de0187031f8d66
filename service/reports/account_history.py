"""An account's history, read from its state database (service.state.history), and the
plain series the summary is computed from. The one module of this package that reads."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from service.reports.summary import AccountSeries
from service.reports.trading import Fill
from service.state.history import (
    EquityPoint,
    InstrumentPoint,
    OrderRow,
    read_equity_history,
    read_instrument_history,
    read_orders,
)


class NoHistoryError(Exception):
    """There is nothing to report for this account (yet); the message says what to do."""


@dataclass(frozen=True)
class AccountHistory:
    account: str
    equity: list[EquityPoint]  # by seq
    instruments: list[InstrumentPoint]  # by seq, then symbol
    orders: list[OrderRow]  # newest first


def read_account_history(account: str, database: Path) -> AccountHistory:
    """The whole history of `account`; NoHistoryError when its database is missing or has
    no update in its history yet."""
    if not database.is_file():
        raise NoHistoryError(
            f"account {account!r} has no state yet ({database} does not exist): run the "
            "daemon (`regime-trader run`) until it has made an update, or pass the "
            "--state-dir it used"
        )
    history = AccountHistory(account, read_equity_history(database),
                             read_instrument_history(database), read_orders(database))
    if not history.equity:
        raise NoHistoryError(
            f"account {account!r} has no update in its history yet ({database}): the "
            "history starts with the first update this version makes; run the daemon "
            "until it has made one"
        )
    return history


def fills_of(orders: list[OrderRow]) -> list[Fill]:
    return [
        Fill(o.seq, o.symbol, o.side, o.filled_qty, o.filled_avg_price)
        for o in orders
        if o.filled_qty > 0 and o.filled_avg_price is not None
    ]


def closes_of(points: list[InstrumentPoint]) -> dict[str, list[tuple[int, float]]]:
    closes: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for p in points:  # already by seq: each symbol's list comes out ascending
        closes[p.symbol].append((p.seq, p.close))
    return dict(closes)


def account_series(history: AccountHistory) -> AccountSeries:
    return AccountSeries(
        account=history.account,
        seqs=[p.seq for p in history.equity],
        times=[p.bar_time for p in history.equity],
        equity=[p.equity for p in history.equity],
        fills=fills_of(history.orders),
        closes=closes_of(history.instruments),
        regimes=[p.regime for p in history.instruments],
    )
