"""The per-account state database: one SQLite file, one transaction per update.

The checkpoint of an update (model state, book, decisions and order intents) is committed
in ONE transaction before any intent is sent, with synchronous=FULL so a power loss can
never roll back an id the broker has already seen. Order outcomes are recorded after,
without an fsync of their own (synchronous=NORMAL for that transaction): losing one to a
power loss is losing it to a crash before it was written, which resolution already
covers (the intent stays open and is asked of the broker by its client_order_id), and
the next checkpoint's fsync of the WAL makes it durable with its own frames.
The schema, its version and migrations, and the database's identity (owner, order epoch)
live in service.state.schema (a database opened by service.state.opening), the row forms
in service.state.records (an update's decisions: one packed row,
service.state.decision_columns).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from service.state import decision_columns, history, returns_rows, table_sizes, wal_backfill
from service.state.errors import StateError, StateUnavailableError, UnusableStateError
from service.state.opening import connect, open_for_writing, prepare
from service.state.order_ids import OrderIds
from service.state.records import (
    Checkpoint,
    DecisionColumns,
    DecisionRow,
    IntentRecord,
    WindowColumns,
    WindowWrite,
    checkpoint_from_row,
    checkpoint_row,
    intent_from_row,
    pending_intent_row,
)
from service.state.schema import SCHEMA_VERSION
from service.state.storage_faults import classify
from service.state.transaction import Transaction
from service.types import OrderIntent, OrderOutcome, OrderStatus

# Re-exported: callers import the state package's names from here.
__all__ = [
    "SCHEMA_VERSION",
    "Checkpoint",
    "DecisionColumns",
    "DecisionRow",
    "IntentRecord",
    "StateError",
    "StateStore",
    "StateUnavailableError",
    "UnusableStateError",
    "connect",
]

DEFAULT_RETENTION = 500
_CHECKPOINT = ("SELECT seq, bar_time, config_hash, backend, adapter, numerics, cash, equity, "
               "model, model_digest, book FROM checkpoints")
_STAGE_CARRIES = "INSERT OR REPLACE INTO carries VALUES (?, ?)"  # a row staged, replaced


class StateStore:
    """One account's database. Not shared between processes that write.

    `account` (the worker's) is stamped into a database that has no owner yet, and a
    database of another account is refused; tools that only read pass none."""

    def __init__(
        self, path: Path, retention: int = DEFAULT_RETENTION, *, account: str | None = None
    ) -> None:
        self.path = path
        self.retention = retention
        self._conn = open_for_writing(path)
        self._returns = returns_rows.ReturnsRows()
        try:
            self.ids: OrderIds = prepare(self._conn, path, account)
        except sqlite3.Error as error:
            self._conn.close()
            raise classify(error, path) from None
        except StateError:
            self._conn.close()
            raise

    def close(self) -> None:
        self._conn.close()

    def ids_for(self, account: str) -> OrderIds:
        """The order ids `account` makes with this database (its epoch)."""
        return OrderIds(account, self.ids.epoch, self.ids.legacy)

    # -- meta --------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- checkpoints -------------------------------------------------------------------

    def latest(self) -> Checkpoint | None:
        row = self._conn.execute(f"{_CHECKPOINT} ORDER BY seq DESC LIMIT 1").fetchone()
        return None if row is None else checkpoint_from_row(row)

    def commit_update(
        self,
        checkpoint: Checkpoint,
        decisions: Sequence[DecisionRow] | DecisionColumns,
        intents: Sequence[OrderIntent],
        inside: Callable[[], None] | None = None,
        windows: WindowColumns | Mapping[str, WindowWrite] | None = None,
        carries: bytes | None = None,
    ) -> None:
        """The checkpoint of one update, all or nothing. Refuses a sequence gap. A failed
        write (disk full, I/O error) rolls back and raises StateError: nothing of this
        update may be sent. `inside` runs before COMMIT (the tests' crash point);
        `windows`: each instrument's new returns and window (service.state.returns_rows), as
        columns or by symbol; `carries`: its carries row (carry_stacks.CarryBlob.arrays),
        None where stage_carries wrote it before."""
        if not isinstance(windows, WindowColumns):
            windows = WindowColumns.of(windows or {})
        try:
            stops = self._commit_update(checkpoint, decisions, intents, inside, windows, carries)
        except sqlite3.OperationalError as error:  # disk full, I/O error, locked
            raise StateError(
                f"{self.path}: checkpoint {checkpoint.seq} was not committed ({error}); "
                "none of its orders was sent; free disk space or fix the device, the "
                "worker resumes from the last committed checkpoint"
            ) from error
        self._returns.committed(stops)

    def _commit_update(
        self,
        checkpoint: Checkpoint,
        decisions: Sequence[DecisionRow] | DecisionColumns,
        intents: Sequence[OrderIntent],
        inside: Callable[[], None] | None,
        windows: WindowColumns,
        carries: bytes | None,
    ) -> dict[str, int]:
        with self._transaction() as conn:
            self._refuse_gap(conn, checkpoint.seq)
            conn.execute("INSERT INTO checkpoints VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                         checkpoint_row(checkpoint))
            if carries is not None:
                conn.execute(_STAGE_CARRIES, (checkpoint.seq, carries))
            columns = decision_columns.pack(decisions)  # for decisions and the history
            decision_columns.write_decisions(conn, checkpoint.seq, columns)
            conn.executemany(
                "INSERT INTO intents (client_order_id, seq, symbol, side, qty, status) "
                "VALUES (?,?,?,?,?,?)",
                [pending_intent_row(checkpoint.seq, i) for i in intents],
            )
            history.record_update(conn, checkpoint, columns)
            stops = self._returns.write(conn, checkpoint.seq, windows)
            self._prune(conn, checkpoint.seq)
            if inside is not None:
                inside()
        return stops

    def _refuse_gap(self, conn: sqlite3.Connection, seq: int) -> None:
        last = conn.execute("SELECT MAX(seq) FROM checkpoints").fetchone()[0]
        if last is not None and seq != last + 1:
            raise StateError(
                f"{self.path}: checkpoint {seq} does not follow {last}; "
                "another process may be writing this account's state"
            )

    def checkpoint_seqs(self) -> list[int]:
        return [r[0] for r in self._conn.execute("SELECT seq FROM checkpoints ORDER BY seq")]

    def checkpoint(self, seq: int) -> Checkpoint | None:
        row = self._conn.execute(f"{_CHECKPOINT} WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else checkpoint_from_row(row)

    def stage_carries(self, seq: int, carries: bytes) -> bool:
        """Checkpoint `seq`'s carries row, written before it (carry_stacks.CarriesAhead),
        in a transaction not synced: the checkpoint's synced COMMIT makes these frames
        durable with its own (the WAL is appended in order), and one lost with them is a
        checkpoint lost. False if it was not written (the checkpoint writes it then)."""
        try:
            with self._transaction(durable=False) as conn:
                conn.execute(_STAGE_CARRIES, (seq, carries))
        except sqlite3.OperationalError:  # disk full, I/O error: the checkpoint tells
            return False
        return True

    def carries(self, seq: int) -> bytes | None:
        """Checkpoint `seq`'s carries row (none for one of schema version 8 or before)."""
        row = self._conn.execute("SELECT arrays FROM carries WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else bytes(row[0])

    def windows(self, seq: int) -> dict[str, list[float]]:
        """Checkpoint `seq`'s return windows by symbol (none for one of schema version 3)."""
        return returns_rows.read_windows(self._conn, seq)

    def decisions(self, seq: int) -> list[DecisionRow]:
        """Update `seq`'s decisions by symbol."""
        return decision_columns.read_decisions(self._conn, seq)

    def table_bytes(self) -> dict[str, tuple[int, int]] | None:
        """(bytes used, rows) of each table (service.state.table_sizes)."""
        return table_sizes.table_bytes(self._conn)

    def backfill_wal(self) -> wal_backfill.Backfill:
        """The WAL copied into the database file, after a bar's update (wal_backfill.py)."""
        try:
            return wal_backfill.backfill(self._conn)
        except sqlite3.Error as error:
            raise classify(error, self.path) from None

    def empty_wal(self) -> Path:
        """Copy the WAL into the main file and truncate it (what an update writes next is
        then the WAL's whole size, `bench stages`); returns the WAL's path."""
        self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return self.path.with_name(self.path.name + "-wal")

    def model_digests(self) -> dict[int, str]:
        rows = self._conn.execute("SELECT seq, model_digest FROM checkpoints ORDER BY seq")
        return {int(seq): str(digest) for seq, digest in rows}

    # -- intents -----------------------------------------------------------------------

    def record_outcomes(self, outcomes: Sequence[OrderOutcome]) -> None:
        """What the broker said of these intents, in one transaction, not synced (above):
        an fsync each in the orders and reconcile stages of every update."""
        with self._transaction(durable=False) as conn:
            conn.executemany(
                "UPDATE intents SET status = ?, broker_order_id = ?, filled_qty = ?, "
                "filled_avg_price = ?, reason = ? WHERE client_order_id = ?",
                [(o.status.value, o.broker_order_id, o.filled_qty, o.filled_avg_price,
                  o.reason, o.client_order_id) for o in outcomes],
            )

    def open_intents(self) -> list[IntentRecord]:
        """Intents not yet final: pending, unknown, accepted or partially filled. Named by
        IN, not as NOT IN the final ones: the status index then reads these few rows, not
        every intent the account ever made (asked at every update)."""
        open_ = tuple(s.value for s in OrderStatus if not s.is_final)
        marks = ",".join("?" * len(open_))
        rows = self._conn.execute(
            "SELECT client_order_id, symbol, side, qty, seq, status FROM intents "
            f"WHERE status IN ({marks}) ORDER BY seq, client_order_id",
            open_,
        )
        return [intent_from_row(r) for r in rows]

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

    def _transaction(self, durable: bool = True) -> Transaction:
        return Transaction(self._conn, durable)

    def _prune(self, conn: sqlite3.Connection, seq: int) -> None:
        cutoff = seq - self.retention
        conn.execute("DELETE FROM checkpoints WHERE seq <= ?", (cutoff,))
        conn.execute("DELETE FROM decisions WHERE seq <= ?", (cutoff,))
        conn.execute("DELETE FROM carries WHERE seq <= ?", (cutoff,))
        returns_rows.prune(conn, seq, cutoff)
