"""One write transaction of the state database, synced at COMMIT or not.

The connection runs with synchronous=FULL (service.state.store): a COMMIT syncs the WAL,
so no checkpoint is lost to a power loss. A transaction whose loss the service recovers
from by itself (order outcomes: asked of the broker again) commits without that sync; the
next synced COMMIT makes its frames durable with its own, the WAL being appended in order.
"""

from __future__ import annotations

import sqlite3


class Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception. Not `durable`: committed
    without syncing the WAL (synchronous=NORMAL for this transaction alone, FULL again
    after), so a power loss may roll it back, never leave it half done."""

    def __init__(self, conn: sqlite3.Connection, durable: bool = True) -> None:
        self._conn, self._durable = conn, durable

    def __enter__(self) -> sqlite3.Connection:
        if not self._durable:
            self._conn.execute("PRAGMA synchronous = NORMAL")
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except BaseException:  # not begun (locked, I/O error): __exit__ will not run
            if not self._durable:
                self._conn.execute("PRAGMA synchronous = FULL")
            raise
        return self._conn

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            self._conn.execute("COMMIT" if exc_type is None else "ROLLBACK")
        finally:
            if not self._durable:
                # The level cannot change inside a transaction: a COMMIT that failed and
                # left it open is rolled back first, so the next checkpoint syncs again.
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                self._conn.execute("PRAGMA synchronous = FULL")
