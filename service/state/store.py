"""The per-account state database: one SQLite file, one transaction per update.

The checkpoint of an update (model state, book, decisions and order intents) is committed
in ONE transaction before any intent is sent, with synchronous=FULL so a power loss can
never roll back an id the broker has already seen. Order outcomes are recorded after.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from service.types import OrderIntent, OrderOutcome, OrderStatus, Side

SCHEMA_VERSION = 1
DEFAULT_RETENTION = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS checkpoints (
    seq INTEGER PRIMARY KEY,
    bar_time TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    backend TEXT NOT NULL,
    adapter TEXT NOT NULL,
    numerics TEXT NOT NULL,
    cash REAL NOT NULL,
    equity REAL NOT NULL,
    model BLOB NOT NULL,
    model_digest TEXT NOT NULL,
    book TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER NOT NULL,
    symbol TEXT NOT NULL,
    regime INTEGER NOT NULL,
    p_turbulent REAL NOT NULL,
    pred_mean REAL NOT NULL,
    pred_vol REAL NOT NULL,
    converged INTEGER NOT NULL,
    target_weight REAL NOT NULL,
    target_qty REAL NOT NULL,
    PRIMARY KEY (seq, symbol)
);
CREATE TABLE IF NOT EXISTS intents (
    client_order_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    symbol TEXT NOT NULL,
    side TEXT NOT NULL,
    qty REAL NOT NULL,
    status TEXT NOT NULL,
    broker_order_id TEXT,
    filled_qty REAL NOT NULL DEFAULT 0,
    filled_avg_price REAL,
    reason TEXT
);
CREATE INDEX IF NOT EXISTS intents_by_status ON intents (status);
"""


class StateError(Exception):
    """The state database is unreadable or inconsistent; says which file and what to do."""


class UnusableStateError(StateError):
    """The database cannot be trusted at all (corrupt, truncated, a foreign schema, a model
    blob that fails its digest): restarting will not help, a person must act. Never reset
    silently."""


@dataclass(frozen=True)
class DecisionRow:
    symbol: str
    regime: int
    p_turbulent: float
    pred_mean: float
    pred_vol: float
    converged: bool
    target_weight: float
    target_qty: float


@dataclass(frozen=True)
class Checkpoint:
    seq: int
    bar_time: datetime
    config_hash: str
    backend: str
    adapter: str
    numerics: str
    cash: float
    equity: float
    model: bytes
    book: dict[str, Any]

    @property
    def model_digest(self) -> str:
        return hashlib.sha256(self.model).hexdigest()


@dataclass(frozen=True)
class IntentRecord:
    intent: OrderIntent
    seq: int
    status: OrderStatus


def connect(path: Path, read_only: bool = False) -> sqlite3.Connection:
    uri = f"file:{path}?mode=ro" if read_only else f"file:{path}"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 5000")
    if not read_only:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
    return conn


class StateStore:
    """One account's database. Not shared between processes that write."""

    def __init__(self, path: Path, retention: int = DEFAULT_RETENTION) -> None:
        self.path = path
        self.retention = retention
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = connect(path)
            self._conn.executescript(_SCHEMA)
            self._check_integrity()
        except sqlite3.DatabaseError as error:
            raise UnusableStateError(
                f"{path}: not a usable state database ({error}); move it aside to start "
                "afresh, or restore it from a backup"
            ) from None
        self._set_schema_version()

    def close(self) -> None:
        self._conn.close()

    # -- meta --------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- checkpoints -------------------------------------------------------------------

    def latest(self) -> Checkpoint | None:
        row = self._conn.execute(
            "SELECT seq, bar_time, config_hash, backend, adapter, numerics, cash, equity, "
            "model, model_digest, book FROM checkpoints ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        return None if row is None else self._checkpoint_from_row(row)

    def commit_update(
        self,
        checkpoint: Checkpoint,
        decisions: Sequence[DecisionRow],
        intents: Sequence[OrderIntent],
        inside: Callable[[], None] | None = None,
    ) -> None:
        """The checkpoint of one update, all or nothing. Refuses a sequence gap. A failed
        write (disk full, I/O error) rolls back and raises StateError: nothing of this
        update may be sent. `inside` runs before COMMIT (the tests' crash point)."""
        try:
            self._commit_update(checkpoint, decisions, intents, inside)
        except sqlite3.OperationalError as error:  # disk full, I/O error, locked
            raise StateError(
                f"{self.path}: checkpoint {checkpoint.seq} was not committed ({error}); "
                "none of its orders was sent; free disk space or fix the device, the "
                "worker resumes from the last committed checkpoint"
            ) from error

    def _commit_update(
        self,
        checkpoint: Checkpoint,
        decisions: Sequence[DecisionRow],
        intents: Sequence[OrderIntent],
        inside: Callable[[], None] | None,
    ) -> None:
        with self._transaction() as conn:
            last = conn.execute("SELECT MAX(seq) FROM checkpoints").fetchone()[0]
            if last is not None and checkpoint.seq != last + 1:
                raise StateError(
                    f"{self.path}: checkpoint {checkpoint.seq} does not follow {last}; "
                    "another process may be writing this account's state"
                )
            conn.execute(
                "INSERT INTO checkpoints VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                _checkpoint_row(checkpoint),
            )
            conn.executemany(
                "INSERT INTO decisions VALUES (?,?,?,?,?,?,?,?,?)",
                [(checkpoint.seq, *_decision_row(d)) for d in decisions],
            )
            conn.executemany(
                "INSERT INTO intents (client_order_id, seq, symbol, side, qty, status) "
                "VALUES (?,?,?,?,?,?)",
                [
                    (
                        i.client_order_id,
                        checkpoint.seq,
                        i.symbol,
                        i.side.value,
                        i.qty,
                        OrderStatus.PENDING.value,
                    )
                    for i in intents
                ],
            )
            self._prune(conn, checkpoint.seq)
            if inside is not None:
                inside()

    def checkpoint_seqs(self) -> list[int]:
        return [r[0] for r in self._conn.execute("SELECT seq FROM checkpoints ORDER BY seq")]

    def model_digests(self) -> dict[int, str]:
        rows = self._conn.execute("SELECT seq, model_digest FROM checkpoints ORDER BY seq")
        return {int(seq): str(digest) for seq, digest in rows}

    # -- intents -----------------------------------------------------------------------

    def record_outcome(self, outcome: OrderOutcome) -> None:
        self._conn.execute(
            "UPDATE intents SET status = ?, broker_order_id = ?, filled_qty = ?, "
            "filled_avg_price = ?, reason = ? WHERE client_order_id = ?",
            (
                outcome.status.value,
                outcome.broker_order_id,
                outcome.filled_qty,
                outcome.filled_avg_price,
                outcome.reason,
                outcome.client_order_id,
            ),
        )

    def open_intents(self) -> list[IntentRecord]:
        """Intents not yet final: pending, unknown, accepted or partially filled."""
        final = tuple(s.value for s in OrderStatus if s.is_final)
        marks = ",".join("?" * len(final))
        rows = self._conn.execute(
            "SELECT client_order_id, symbol, side, qty, seq, status FROM intents "
            f"WHERE status NOT IN ({marks}) ORDER BY seq, client_order_id",
            final,
        )
        return [_intent_from_row(r) for r in rows]

    def intents(self) -> list[tuple[str, str, str, float, str]]:
        """(client_order_id, symbol, side, qty, status) for every intent ever made."""
        rows = self._conn.execute(
            "SELECT client_order_id, symbol, side, qty, status FROM intents "
            "ORDER BY seq, client_order_id"
        )
        return [(str(a), str(b), str(c), float(d), str(e)) for a, b, c, d, e in rows]

    def filled_by_symbol(self) -> dict[str, float]:
        """Per symbol, the signed quantity our intents have filled, ever."""
        rows = self._conn.execute(
            "SELECT symbol, SUM(CASE side WHEN 'buy' THEN filled_qty ELSE -filled_qty END) "
            "FROM intents GROUP BY symbol"
        )
        return {str(symbol): float(qty) for symbol, qty in rows}

    # -- internals ---------------------------------------------------------------------

    def _transaction(self) -> _Transaction:
        return _Transaction(self._conn)

    def _prune(self, conn: sqlite3.Connection, seq: int) -> None:
        cutoff = seq - self.retention
        conn.execute("DELETE FROM checkpoints WHERE seq <= ?", (cutoff,))
        conn.execute("DELETE FROM decisions WHERE seq <= ?", (cutoff,))

    def _check_integrity(self) -> None:
        verdict = self._conn.execute("PRAGMA quick_check").fetchone()[0]
        if verdict != "ok":
            raise sqlite3.DatabaseError(f"quick_check reports: {verdict}")

    def _set_schema_version(self) -> None:
        found = self.meta("schema_version")
        if found is None:
            self.set_meta("schema_version", str(SCHEMA_VERSION))
        elif int(found) != SCHEMA_VERSION:
            raise UnusableStateError(
                f"{self.path}: schema version {found}, this build reads {SCHEMA_VERSION}; "
                "use the matching regime-trader version"
            )

    @staticmethod
    def _checkpoint_from_row(row: Sequence[Any]) -> Checkpoint:
        checkpoint = Checkpoint(
            seq=int(row[0]),
            bar_time=datetime.fromisoformat(row[1]),
            config_hash=row[2],
            backend=row[3],
            adapter=row[4],
            numerics=row[5],
            cash=float(row[6]),
            equity=float(row[7]),
            model=bytes(row[8]),
            book=json.loads(row[10]),
        )
        if checkpoint.model_digest != row[9]:
            raise UnusableStateError(
                f"checkpoint {checkpoint.seq}: model state does not match its digest; "
                "restore the database from a backup"
            )
        return checkpoint


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self._conn.execute("BEGIN IMMEDIATE")
        return self._conn

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self._conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


def _checkpoint_row(c: Checkpoint) -> tuple[Any, ...]:
    book = json.dumps(c.book, sort_keys=True, separators=(",", ":"))
    return (
        c.seq,
        c.bar_time.isoformat(),
        c.config_hash,
        c.backend,
        c.adapter,
        c.numerics,
        c.cash,
        c.equity,
        c.model,
        c.model_digest,
        book,
    )


def _decision_row(d: DecisionRow) -> tuple[Any, ...]:
    return (
        d.symbol,
        d.regime,
        d.p_turbulent,
        d.pred_mean,
        d.pred_vol,
        int(d.converged),
        d.target_weight,
        d.target_qty,
    )


def _intent_from_row(row: Iterable[Any]) -> IntentRecord:
    cid, symbol, side, qty, seq, status = row
    intent = OrderIntent(client_order_id=cid, symbol=symbol, side=Side(side), qty=float(qty))
    return IntentRecord(intent=intent, seq=int(seq), status=OrderStatus(status))
