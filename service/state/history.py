"""An account's history: its equity per update, and per modelled instrument the close, the
regime probability with its uncertainty, the target and the position, per update.

Checkpoints are pruned (the last DEFAULT_RETENTION are enough to resume and replay); the
operator's charts, `report` and the P&L in `status` need the whole run, so these rows are
kept apart from them in the same transaction as the checkpoint. One equity row is about
50 bytes per update; the instruments' one row per update (schema version 8: its
instruments packed as columns, service.state.decision_columns; a row per instrument
before) about 60 bytes per instrument, pruned past INSTRUMENT_RETENTION updates (a year
of minute bars) so a database stays bounded. Reads open the database read-only: safe
beside a running daemon, and they read either form.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from service.state import decision_columns, schema
from service.state.decision_columns import UpdateColumns
from service.state.records import Checkpoint
from service.state.sqlite_open import open_sqlite

INSTRUMENT_RETENTION = 100_000  # updates: 256 trading days of 390 minute bars


@dataclass(frozen=True)
class EquityPoint:
    seq: int
    bar_time: datetime
    equity: float
    cash: float


@dataclass(frozen=True)
class InstrumentPoint:
    seq: int
    bar_time: datetime
    symbol: str
    close: float
    p_turbulent: float
    p_turbulent_sd: float
    regime: int
    converged: bool
    target_qty: float
    position_qty: float


@dataclass(frozen=True)
class OrderRow:
    client_order_id: str
    seq: int
    symbol: str
    side: str
    qty: float
    status: str
    filled_qty: float
    filled_avg_price: float | None


# -- writing (inside StateStore's update transaction) -------------------------------------


def record_update(
    conn: sqlite3.Connection, checkpoint: Checkpoint, decisions: UpdateColumns | None
) -> None:
    """The update's equity row and its instruments' row (`decisions` packed, none without)."""
    seq, when = checkpoint.seq, checkpoint.bar_time.isoformat()
    conn.execute("INSERT INTO equity_history VALUES (?,?,?,?)",
                 (seq, when, checkpoint.equity, checkpoint.cash))
    decision_columns.write_history(conn, seq, when, decisions)
    conn.execute("DELETE FROM instrument_history WHERE seq <= ?", (seq - INSTRUMENT_RETENTION,))


# -- reading ---------------------------------------------------------------------------------


def read_equity_history(database: Path) -> list[EquityPoint]:
    rows = _read(database, "SELECT seq, bar_time, equity, cash FROM equity_history ORDER BY seq")
    return [EquityPoint(int(s), datetime.fromisoformat(t), float(e), float(c))
            for s, t, e, c in rows]


def read_instrument_history(database: Path) -> list[InstrumentPoint]:
    """Every instrument's history, by seq, then symbol."""
    rows = _read_with(database, _instrument_rows)
    return [
        InstrumentPoint(int(seq), datetime.fromisoformat(t), str(sym), float(close), float(p),
                        float(sd), int(regime), bool(conv), float(target), float(held))
        for seq, sym, t, close, p, sd, regime, conv, target, held in rows
    ]


ORDER_COLUMNS = ("client_order_id, seq, symbol, side, qty, status, filled_qty, "
                 "filled_avg_price")  # an OrderRow, in order (order_of)


def order_of(row: tuple[Any, ...]) -> OrderRow:
    c, s, sym, side, q, st, f, p = row
    return OrderRow(str(c), int(s), str(sym), str(side), float(q), str(st), float(f),
                    None if p is None else float(p))


def read_orders(database: Path, limit: int | None = None) -> list[OrderRow]:
    """The account's orders, newest first (all of them, or the `limit` newest)."""
    query = f"SELECT {ORDER_COLUMNS} FROM intents ORDER BY seq DESC, client_order_id DESC"
    rows = _read(database, query + ("" if limit is None else f" LIMIT {int(limit)}"))
    return [order_of(row) for row in rows]


def _instrument_rows(conn: sqlite3.Connection) -> Iterable[tuple[Any, ...]]:
    """instrument_history's entries as rows of version 7, whichever form it has."""
    if schema.decisions_packed(conn):
        return decision_columns.read_history(conn)
    return conn.execute("SELECT * FROM instrument_history ORDER BY seq, symbol")


def _read(database: Path, query: str) -> list[tuple[Any, ...]]:
    """All rows of `query` (_read_with)."""
    return _read_with(database, lambda conn: conn.execute(query))


def _read_with(
    database: Path, rows: Callable[[sqlite3.Connection], Iterable[tuple[Any, ...]]]
) -> list[tuple[Any, ...]]:
    """All `rows` read in one read transaction (the schema version and the tables of one
    moment); none from a database written before the history (version 2), whose tables a
    read-only reader cannot create."""
    conn = open_sqlite(database, read_only=True)
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute("BEGIN")
        return list(rows(conn))
    except sqlite3.OperationalError as error:
        if "no such table" in str(error):
            return []
        raise
    finally:
        conn.close()
