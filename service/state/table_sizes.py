"""What each table of a state database takes on disk: what a bar costs it (`bench stages`)."""

from __future__ import annotations

import sqlite3

# The tables that pack many records into a row (service.state.returns_rows,
# service.state.decision_columns): a record is a return (one per instrument and bar), a
# window, a decision or an instrument's history entry (one per instrument and update), as
# it was a row up to schema version 6 (7 for the last two), so bytes per record compare
# across versions.
PACKED_RECORDS = {"returns": "SUM(LENGTH(idx)) / 8", "windows": "SUM(LENGTH(starts)) / 8",
                  "decisions": "SUM(LENGTH(regime)) / 8",
                  "instrument_history": "SUM(LENGTH(regime)) / 8"}


def table_bytes(conn: sqlite3.Connection) -> dict[str, tuple[int, int]] | None:
    """(bytes used, records) of each table, from SQLite's dbstat virtual table; None where
    this SQLite was built without it. A record is a row, or in a packed table one of the
    records its rows hold (PACKED_RECORDS)."""
    try:
        used = dict(conn.execute(
            "SELECT name, SUM(pgsize - unused) FROM dbstat GROUP BY name").fetchall())
    except sqlite3.OperationalError:  # no such table: dbstat
        return None
    names = [n for (n,) in conn.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
    return {n: (int(used.get(n, 0)), _records(conn, n)) for n in names}


def _records(conn: sqlite3.Connection, table: str) -> int:
    count = PACKED_RECORDS.get(table, "COUNT(*)")
    return int(conn.execute(f'SELECT {count} FROM "{table}"').fetchone()[0] or 0)
