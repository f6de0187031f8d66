"""The simulated broker's whole book, as rows: what crash equivalence compares.

Read-only, beside SimBroker; SQL on the simulated broker's own database stays in
service.broker (it plays a remote broker: its book is not the state database).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from service.state.sqlite_open import open_sqlite


def book_rows(path: Path) -> dict[str, list[Any]]:
    """Cash, positions, orders and fills of the book at `path`, in a stable order."""
    conn = open_sqlite(path, read_only=True)
    try:
        return {
            "broker_cash": conn.execute("SELECT cash FROM account").fetchall(),
            "positions": conn.execute("SELECT * FROM positions ORDER BY symbol").fetchall(),
            "orders": conn.execute(
                "SELECT client_order_id, symbol, side, qty, status, submitted_at, filled_qty, "
                "filled_avg_price, reason FROM orders ORDER BY client_order_id").fetchall(),
            "fills": conn.execute("SELECT symbol, side, qty, price, bar_time FROM fills "
                                  "ORDER BY bar_time, symbol, side").fetchall(),
        }
    finally:
        conn.close()
