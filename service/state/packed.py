"""Many numbers in one BLOB column, many symbols in one TEXT column, and back.

SQLite costs about 4.4 us per row inserted here: one row per instrument and update in a
table made a quarter of the checkpoint stage at 268 instruments. The tables an update
writes a row per instrument into (service.state.returns_rows, decision_columns) hold one
row per update instead, its numbers as little-endian int64 or float64 arrays and its
symbols as a JSON list, one entry per number; `replacing` is the migrations' swap of a
per-row table for its packed form. Pure Python (`array`): the supervisor and `status`
import this package without numpy; the worker's writers may hand in numpy's bytes.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager

from service.state.errors import UnusableStateError

INT64 = "q"
FLOAT64 = "d"


def symbols(names: Sequence[str]) -> str:
    """The TEXT column of these symbols, in order."""
    return json.dumps(list(names), separators=(",", ":"))


def ints(values: Iterable[int]) -> bytes:
    """The BLOB column of these integers: little-endian int64."""
    return blob(array(INT64, values))


def blob(values: array) -> bytes:  # type: ignore[type-arg]
    """The BLOB column of an array("q") or ("d"): little-endian int64 or float64."""
    if sys.byteorder == "big":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def read_symbols(text: str, where: str) -> list[str]:
    """The symbols of a TEXT column. Its entries are not checked one by one (that cost
    more than the rest of a pruning at 268 instruments): one that is not a string names
    no instrument, and matches none."""
    try:
        names = json.loads(text)
    except (TypeError, ValueError):
        names = None
    if not isinstance(names, list):
        raise UnusableStateError(f"{where}: its symbols column is not a JSON list of symbols; "
                                 "restore the database from a backup")
    return names


def read_numbers(code: str, blob: bytes, count: int, where: str) -> array:  # type: ignore[type-arg]
    """The `count` numbers of a BLOB column, int64 (`code` "q") or float64 ("d")."""
    values = array(code)
    if len(blob) != count * values.itemsize:
        raise UnusableStateError(f"{where}: {len(blob)} bytes of numbers where {count} symbols are "
                         f"named ({count * values.itemsize} bytes); restore the database "
                         "from a backup")
    values.frombytes(blob)
    if sys.byteorder == "big":
        values.byteswap()
    return values


@contextmanager
def replacing(
    conn: sqlite3.Connection, creates: Iterable[str], tables: Sequence[str]
) -> Iterator[None]:
    """A migration's swap of per-row `tables` for packed ones under the same names, inside
    the caller's transaction: `creates` makes each packed_<table>, the block fills them
    from the old rows, then the old tables go and the packed ones take their names. A
    block that raises leaves the old tables (and the migration rolls back)."""
    for statement in creates:
        conn.execute(statement)  # not executescript: it would COMMIT the migration
    yield
    for table in tables:
        conn.execute(f"DROP TABLE {table}")
        conn.execute(f"ALTER TABLE packed_{table} RENAME TO {table}")
