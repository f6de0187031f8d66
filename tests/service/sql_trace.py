"""The SQL statements an action runs on a connection, for tests that bound them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable


def statements_of(conn: sqlite3.Connection, action: Callable[[], object]) -> list[str]:
    """Every statement `conn` runs during `action()`, in order."""
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        action()
    finally:
        conn.set_trace_callback(None)
    return statements
