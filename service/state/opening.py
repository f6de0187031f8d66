"""Opening an account's state database: the connection's settings, the file's checks,
its migrations (service.state.schema) and its identity."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from service.state import schema
from service.state.errors import UnusableStateError
from service.state.order_ids import OrderIds
from service.state.sqlite_open import open_sqlite
from service.state.storage_faults import classify, unavailable


def connect(path: Path, read_only: bool = False) -> sqlite3.Connection:
    conn = open_sqlite(path, read_only, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 5000")
    if not read_only:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        # Debian's SQLite zeroes each page a DELETE frees, so the oldest checkpoint, pruned
        # with each update, went zeroed into the WAL and was synced with the new one: 408
        # against 284 KB an update at 268 instruments (docs/benchmarks.md, thirty-ninth
        # session). FAST zeroes only what costs no write (freed pages keep old state).
        conn.execute("PRAGMA secure_delete = FAST")
    return conn


def open_for_writing(path: Path) -> sqlite3.Connection:
    """A connection to `path`, its folder made first. What stops a write now (disk full,
    read-only, permission) is StateUnavailableError; what cannot be trusted, unusable."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise unavailable(path, "its folder cannot be created", error) from None
    try:
        return connect(path)
    except sqlite3.Error as error:
        raise classify(error, path) from None


def prepare(conn: sqlite3.Connection, path: Path, account: str | None) -> OrderIds:
    """The database checked, migrated and its identity read (`account` stamped where it
    has no owner yet, refused where it has another)."""
    # The returns tables are made by their migrations (4, 5 and 7, which a new database
    # runs too): made here in their last form, migrations 5 and 7 would fail on them.
    conn.executescript(schema.SCHEMA + schema.HISTORY_SCHEMA)
    verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
    if verdict != "ok":
        raise UnusableStateError(
            f"{path}: not a usable state database (quick_check reports: {verdict}); move "
            "it aside to start afresh, or restore it from a backup"
        )
    schema.migrate(conn, path, account)
    ids = schema.identity(conn, path, account)
    # A file SQLite could open only for reading (read-only mount, immutable, mode bits)
    # would fail at the first checkpoint; a no-op write finds out now, with its cause.
    conn.execute("UPDATE meta SET value = value WHERE key = 'schema_version'")
    return ids
