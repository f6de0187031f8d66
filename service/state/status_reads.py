"""What `status` reads from a state database: the last checkpoint, as typed records.

The database is opened read-only, so this is safe beside a running daemon (SQLite may
leave an empty -wal and a -shm file beside a database no process has open: that is how a
read-only WAL reader works, and the daemon uses them as they are).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from service.state import schema
from service.state.checkpoint_codec import WARMING_KEY
from service.state.errors import StateError, UnusableStateError
from service.state.sqlite_open import open_sqlite
from service.types import OrderStatus

# What reading a database can raise: the file (OSError), SQLite, a malformed value, a
# refused version (StateError).
READ_ERRORS: tuple[type[Exception], ...] = (OSError, sqlite3.Error, ValueError, StateError)
_FINAL = tuple(s.value for s in OrderStatus if s.is_final)


class SchemaVersionError(UnusableStateError):
    """The database was written by a build with a schema version this one cannot read."""


@dataclass(frozen=True)
class TargetPosition:
    """One instrument's target at the last checkpoint (what the strategy wants to hold,
    not what the broker holds)."""

    symbol: str
    target_qty: float
    regime: int
    p_turbulent: float


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
    """What the last checkpoint of an account says."""

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


def read_snapshot(database: Path) -> Snapshot | None:
    """The last checkpoint, read in one read transaction; None before the first update."""
    conn = open_sqlite(database, read_only=True)  # a percent-encoded URI: any legal path
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        conn.execute("BEGIN")
        _check_schema(conn)
        return _latest(conn)
    finally:
        conn.close()


def _check_schema(conn: sqlite3.Connection) -> None:
    try:
        schema.check_readable(conn)
    except UnusableStateError as error:
        raise SchemaVersionError(str(error)) from None


def _latest(conn: sqlite3.Connection) -> Snapshot | None:
    row = conn.execute(
        "SELECT seq, bar_time, equity, cash, backend, adapter, numerics, config_hash, book "
        "FROM checkpoints ORDER BY seq DESC LIMIT 1"
    ).fetchone()
    if row is None:
        return None
    seq, bar_time, equity, cash, backend, adapter, numerics, config_hash, book = row
    return Snapshot(
        seq=int(seq), bar_time=datetime.fromisoformat(bar_time), equity=float(equity),
        cash=float(cash), backend=str(backend), adapter=str(adapter), numerics=str(numerics),
        config_hash=str(config_hash), targets=_targets(conn, int(seq)),
        open_intents=_open_intents(conn), warming=_warming(book),
    )


def _targets(conn: sqlite3.Connection, seq: int) -> tuple[TargetPosition, ...]:
    rows = conn.execute(
        "SELECT symbol, target_qty, regime, p_turbulent FROM decisions WHERE seq = ? "
        "ORDER BY symbol", (seq,)
    )
    return tuple(TargetPosition(str(s), float(q), int(r), float(p)) for s, q, r, p in rows)


def _open_intents(conn: sqlite3.Connection) -> int:
    marks = ",".join("?" * len(_FINAL))
    query = f"SELECT COUNT(*) FROM intents WHERE status NOT IN ({marks})"
    return int(conn.execute(query, _FINAL).fetchone()[0])


def _warming(book: str) -> tuple[Warming, ...]:
    """The warming instruments of a checkpoint's book (none in checkpoints written before;
    no stage in those of before cold warm-ups ran apart: short of history)."""
    entries = json.loads(book).get(WARMING_KEY, {})
    return tuple(Warming(str(symbol), int(e["bars_available"]), int(e["bars_needed"]),
                         str(e.get("stage", "history")))
                 for symbol, e in sorted(entries.items()))
