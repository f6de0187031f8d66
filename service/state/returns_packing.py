"""Schema version 7: the returns and windows tables, one row per update with its returns
or windows packed as columns (service.state.returns_rows explains why), and the migration
that packs the rows of version 6 (a row per symbol and return, per symbol and window)."""

from __future__ import annotations

import sqlite3
from array import array
from itertools import groupby

from service.state import packed

# seq: the update that wrote the row. symbols: a JSON list, one symbol per return (per
# window); idx, value (starts, stops): little-endian int64 (value: float64) arrays in the
# same order.
PACKED_SCHEMA = """
CREATE TABLE packed_returns (
    seq INTEGER PRIMARY KEY,
    symbols TEXT NOT NULL,
    idx BLOB NOT NULL,
    value BLOB NOT NULL
);
CREATE TABLE packed_windows (
    seq INTEGER PRIMARY KEY,
    symbols TEXT NOT NULL,
    starts BLOB NOT NULL,
    stops BLOB NOT NULL
);
"""


def pack_tables(conn: sqlite3.Connection) -> None:
    """Version 6's `returns` (seq, symbol, idx, value) and `windows` (seq, symbol, start,
    stop) into one row per seq each, under the same names, inside the caller's transaction.
    Every return keeps its (symbol, idx) and every window its span, so each checkpoint
    reads the same window back; returns of version 4 (seq 0) make one row of seq 0."""
    with packed.replacing(conn, filter(str.strip, PACKED_SCHEMA.split(";")),
                          ("returns", "windows")):
        _pack_returns(conn)
        _pack_windows(conn)


def _pack_returns(conn: sqlite3.Connection) -> None:
    returns = conn.execute("SELECT seq, symbol, idx, value FROM returns ORDER BY seq, symbol, idx")
    for seq, rows in groupby(returns, key=lambda row: int(row[0])):
        _, names, idx, values = zip(*rows, strict=True)
        conn.execute("INSERT INTO packed_returns VALUES (?,?,?,?)",
                     (seq, packed.symbols(names), packed.ints(idx),
                      packed.blob(array(packed.FLOAT64, values))))  # fmt: skip


def _pack_windows(conn: sqlite3.Connection) -> None:
    windows = conn.execute("SELECT seq, symbol, start, stop FROM windows ORDER BY seq, symbol")
    for seq, rows in groupby(windows, key=lambda row: int(row[0])):
        _, names, starts, stops = zip(*rows, strict=True)
        conn.execute("INSERT INTO packed_windows VALUES (?,?,?,?)",
                     (seq, packed.symbols(names), packed.ints(starts),
                      packed.ints(stops)))  # fmt: skip
