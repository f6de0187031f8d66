"""What each table of a state database takes on disk: what a bar costs it (`bench stages`)."""

from __future__ import annotations

import sqlite3


def table_bytes(conn: sqlite3.Connection) -> dict[str, tuple[int, int]] | None:
    """(bytes used, rows) of each table, from SQLite's dbstat virtual table; None where
    this SQLite was built without it."""
    try:
        used = dict(conn.execute(
            "SELECT name, SUM(pgsize - unused) FROM dbstat GROUP BY name").fetchall())
    except sqlite3.OperationalError:  # no such table: dbstat
        return None
    names = [n for (n,) in conn.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    return {n: (int(used.get(n, 0)), int(conn.execute(f'SELECT COUNT(*) FROM "{n}"').fetchone()[0]))
            for n in names}  # fmt: skip
