"""What `status` reads from a state database: the last checkpoint, as typed records.

The database is opened read-only and read in one transaction, so this is safe beside a
running daemon and consistent (SQLite may leave an empty -wal and a -shm file beside a
database no process has open: that is how a read-only WAL reader works, and the daemon
uses them as they are). Standard library only: `status` must start fast.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from service.state import book_columns, decision_columns, schema
from service.state.errors import StateError, UnusableStateError
from service.state.history import ORDER_COLUMNS, OrderRow, order_of
from service.state.sqlite_open import open_sqlite
from service.types import OrderStatus

# The checkpoint book's key (service.state.checkpoint_codec, which needs numpy, names it
# too; tests/service/test_status.py checks they agree; the positions' keys are
# book_columns'). Persisted: never rename one.
WARMING_KEY = "warming"

# What reading a database can raise: the file (OSError), SQLite, a malformed value, a
# refused version (StateError); and reading a snapshot, a book missing a key or of
# another shape.
READ_ERRORS: tuple[type[Exception], ...] = (OSError, sqlite3.Error, ValueError, StateError)
SNAPSHOT_ERRORS: tuple[type[Exception], ...] = (*READ_ERRORS, KeyError, TypeError)
_FINAL = tuple(s.value for s in OrderStatus if s.is_final)
OPEN_ORDERS_SHOWN = 50  # the oldest first; `open_intents` counts them all
FLAT_EPS = 0.005  # equity within half a cent of cash: no position was held


class SchemaVersionError(UnusableStateError):
    """The database was written by a build with a schema version this one cannot read."""


@dataclass(frozen=True)
class TargetPosition:
    """One instrument at the last checkpoint: what the strategy wants to hold (None before
    its first decision), its regime, and its last close."""

    symbol: str
    target_qty: float | None
    regime: int | None
    p_turbulent: float | None
    last_close: float | None = None


@dataclass(frozen=True)
class Holding:
    """A position the broker reported at the update's snapshot (the last reconciliation)."""

    symbol: str
    qty: float
    avg_entry_price: float


@dataclass(frozen=True)
class EquityMark:
    """The account's equity at one update; `unrealised` is the open positions' gain then
    (None where that checkpoint is pruned and the account was not flat)."""

    seq: int
    bar_time: datetime
    equity: float
    cash: float
    unrealised: float | None


@dataclass(frozen=True)
class Warming:
    """An instrument not modelled yet, at a checkpoint: short of history ("history"), or
    with its cold warm-up running ("model")."""

    symbol: str
    bars_available: int
    bars_needed: int
    stage: str = "history"


@dataclass(frozen=True)
class Snapshot:
    """What the last checkpoint of an account says, and the marks its P&L is taken from."""

    seq: int
    bar_time: datetime
    equity: float
    cash: float
    backend: str
    adapter: str
    numerics: str
    config_hash: str
    targets: tuple[TargetPosition, ...]
    open_intents: int
    warming: tuple[Warming, ...] = ()  # instruments still gathering a window of bars
    positions: tuple[Holding, ...] | None = None  # None: written before they were recorded
    open_orders: tuple[OrderRow, ...] = ()
    first: EquityMark | None = None  # the first update on record
    day_base: EquityMark | None = None  # the last update before the last bar's day


DayStart = Callable[[datetime], datetime]  # a bar time -> when its day began (UTC)


def read_snapshot(database: Path, day_start: DayStart | None = None) -> Snapshot | None:
    """The last checkpoint, read in one read transaction; None before the first update.
    With `day_start`, `day_base` is the last update before the day of the last bar."""
    conn = open_sqlite(database, read_only=True)  # a percent-encoded URI: any legal path
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute("BEGIN")
        _check_schema(conn)
        return _latest(conn, day_start)
    finally:
        conn.close()


def _check_schema(conn: sqlite3.Connection) -> None:
    try:
        schema.check_readable(conn)
    except UnusableStateError as error:
        raise SchemaVersionError(str(error)) from None


def _latest(conn: sqlite3.Connection, day_start: DayStart | None) -> Snapshot | None:
    row = conn.execute(
        "SELECT seq, bar_time, equity, cash, backend, adapter, numerics, config_hash, book "
        "FROM checkpoints ORDER BY seq DESC LIMIT 1"
    ).fetchone()
    if row is None:
        return None
    seq, bar_time, equity, cash, backend, adapter, numerics, config_hash, text = row
    book: dict[str, Any] = json.loads(text)
    when = datetime.fromisoformat(bar_time)
    return Snapshot(
        seq=int(seq), bar_time=when, equity=float(equity), cash=float(cash),
        backend=str(backend), adapter=str(adapter), numerics=str(numerics),
        config_hash=str(config_hash), targets=_targets(conn, int(seq), book),
        open_intents=_open_intents(conn), warming=_warming(book), positions=_holdings(book),
        open_orders=_open_orders(conn), first=_first_mark(conn),
        day_base=None if day_start is None else _mark_before(conn, day_start(when)),
    )


# -- instruments and positions ---------------------------------------------------------------


def _targets(
    conn: sqlite3.Connection, seq: int, book: dict[str, Any]
) -> tuple[TargetPosition, ...]:
    """Every instrument of the book and of the update's batch: the batch's from its
    decisions, the others with their last decision (its turbulence probability looked up)."""
    batch = {str(s): TargetPosition(str(s), float(q), int(r), float(p))
             for s, q, r, p in _batch(conn, seq)}
    instruments: dict[str, Any] = book_columns.entries(book)
    symbols = sorted(set(batch) | set(instruments))
    last = _last_p_turbulent(conn, [symbol for symbol in symbols if symbol not in batch])
    return tuple(_target(symbol, batch.get(symbol), instruments.get(symbol) or {},
                         last.get(symbol)) for symbol in symbols)  # fmt: skip


def _batch(conn: sqlite3.Connection, seq: int) -> list[tuple[Any, ...]]:
    """(symbol, target_qty, regime, p_turbulent) of update `seq`'s decisions."""
    if schema.decisions_packed(conn):
        return decision_columns.decisions_at(conn, seq, ("target_qty", "regime", "p_turbulent"))
    return conn.execute("SELECT symbol, target_qty, regime, p_turbulent FROM decisions "
                        "WHERE seq = ?", (seq,)).fetchall()


def _target(symbol: str, decided: TargetPosition | None, entry: dict[str, Any],
            p_turbulent: float | None) -> TargetPosition:
    close = None if entry.get("last_close") is None else float(entry["last_close"])
    if decided is not None:
        return replace(decided, last_close=close)
    decision = entry.get("decision")
    target = None if decision is None else float(decision["target_qty"])
    regime = None if entry.get("regime") is None else int(entry["regime"])
    return TargetPosition(symbol, target, regime, p_turbulent, close)


def _last_p_turbulent(conn: sqlite3.Connection, symbols: list[str]) -> dict[str, float]:
    """Each symbol's turbulence probability in its newest decision (none: none retained).
    Packed, one pass over the rows newest first for all of them, until each is found."""
    if schema.decisions_packed(conn):
        return {s: float(p) for s, p in
                decision_columns.latest_values(conn, symbols, "p_turbulent").items()}
    found = {}
    for symbol in symbols:
        row = conn.execute("SELECT p_turbulent FROM decisions WHERE symbol = ? "
                           "ORDER BY seq DESC LIMIT 1", (symbol,)).fetchone()
        if row is not None:
            found[symbol] = float(row[0])
    return found


def _holdings(book: dict[str, Any]) -> tuple[Holding, ...] | None:
    held = book_columns.positions(book)
    if held is None:
        return None
    return tuple(Holding(str(s), float(q), float(p)) for s, (q, p) in sorted(held.items()))


def unrealised_of(book: dict[str, Any]) -> float | None:
    """The open positions' gain at a checkpoint: the sum of qty x (last close - average
    entry price); a position without a close in the book counts 0. None without positions."""
    holdings = _holdings(book)
    if holdings is None:
        return None
    instruments: dict[str, Any] = book_columns.entries(book)
    closes = {s: e.get("last_close") for s, e in instruments.items()}
    return sum(h.qty * (float(closes[h.symbol]) - h.avg_entry_price) for h in holdings
               if closes.get(h.symbol) is not None)


def _warming(book: dict[str, Any]) -> tuple[Warming, ...]:
    """The warming instruments of a checkpoint's book (none in checkpoints written before;
    no stage in those of before cold warm-ups ran apart: short of history)."""
    entries = book.get(WARMING_KEY, {})
    return tuple(Warming(str(symbol), int(e["bars_available"]), int(e["bars_needed"]),
                         str(e.get("stage", "history")))
                 for symbol, e in sorted(entries.items()))


# -- orders ------------------------------------------------------------------------------------


def _open_intents(conn: sqlite3.Connection) -> int:
    marks = ",".join("?" * len(_FINAL))
    query = f"SELECT COUNT(*) FROM intents WHERE status NOT IN ({marks})"
    return int(conn.execute(query, _FINAL).fetchone()[0])


def _open_orders(conn: sqlite3.Connection) -> tuple[OrderRow, ...]:
    marks = ",".join("?" * len(_FINAL))
    rows = conn.execute(
        f"SELECT {ORDER_COLUMNS} FROM intents "
        f"WHERE status NOT IN ({marks}) ORDER BY seq, client_order_id LIMIT ?",
        (*_FINAL, OPEN_ORDERS_SHOWN))
    return tuple(order_of(row) for row in rows)


# -- equity marks for the P&L -----------------------------------------------------------------


def _first_mark(conn: sqlite3.Connection) -> EquityMark | None:
    return _mark(conn, "SELECT seq, bar_time, equity, cash FROM equity_history "
                       "ORDER BY seq LIMIT 1", ())


def _mark_before(conn: sqlite3.Connection, moment: datetime) -> EquityMark | None:
    """The last update whose bar is before `moment` (bar times are stored as UTC ISO
    strings, which sort as the times do)."""
    return _mark(conn, "SELECT seq, bar_time, equity, cash FROM equity_history "
                       "WHERE bar_time < ? ORDER BY seq DESC LIMIT 1", (moment.isoformat(),))


def _mark(conn: sqlite3.Connection, query: str, args: tuple[str, ...]) -> EquityMark | None:
    try:
        row = conn.execute(query, args).fetchone()
    except sqlite3.OperationalError as error:  # a database of before the history (v1, v2)
        if "no such table" in str(error):
            return None
        raise
    if row is None:
        return None
    seq, bar_time, equity, cash = int(row[0]), row[1], float(row[2]), float(row[3])
    return EquityMark(seq, datetime.fromisoformat(bar_time), equity, cash,
                      _unrealised_at(conn, seq, equity, cash))


def _unrealised_at(conn: sqlite3.Connection, seq: int, equity: float, cash: float) -> float | None:
    """From that update's checkpoint while it is kept; past its pruning, 0 when the
    account was flat (equity = cash), else unknown."""
    row = conn.execute("SELECT book FROM checkpoints WHERE seq = ?", (seq,)).fetchone()
    found = None if row is None else unrealised_of(json.loads(row[0]))
    if found is not None:
        return found
    return 0.0 if abs(equity - cash) < FLAT_EPS else None
