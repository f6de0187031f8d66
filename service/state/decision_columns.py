"""An update's decisions, as the `decisions` and `instrument_history` tables hold them: ONE
row per update each (schema version 8), its instruments packed as columns.

Up to version 7 both tables held a row per instrument and update: at 268 instruments their
two executemany inserts cost ~2.4 ms of every checkpoint. Now a row holds the update's
symbols as a JSON list and each field as a little-endian array, one entry per symbol in
the same order (service.state.packed): float64 for a REAL column, int64 for an INTEGER
one (`converged` 0 or 1). An update's decisions are packed once (`pack`) and written into
both tables. instrument_history's bar time is the update's, one TEXT column per row.

Every reader gives back what the per-row tables gave. NULL: none of version 7's columns
could be NULL, so no entry is absent and the arrays need no mask. What version 7 refused,
these refuse the same, with the IntegrityError SQLite raised: a NaN (SQLite stores a NaN
as NULL, which NOT NULL refused) and a symbol twice in one update (its primary key). And
SQLite keeps a REAL of no fraction as an integer, so version 7 read -0.0 back as 0.0: the
readers do too. Pure Python: `status` imports this without numpy.
"""

from __future__ import annotations

import math
import sqlite3
import struct
from collections.abc import Collection, Iterator, Sequence
from itertools import groupby
from operator import itemgetter
from typing import Any, NamedTuple

from service.state import packed
from service.state.errors import UnusableStateError
from service.state.records import DecisionColumns, DecisionRow

# Each table's fields, in its columns' order (after seq and symbols), as version 7's.
DECISION_FIELDS = ("regime", "p_turbulent", "pred_mean", "pred_vol", "converged",
                   "target_weight", "target_qty")
HISTORY_FIELDS = ("close", "p_turbulent", "p_turbulent_sd", "regime", "converged",
                  "target_qty", "position_qty")
INTEGER_FIELDS = frozenset({"regime", "converged"})  # int64; every other field float64
_FIELDS = DecisionColumns._fields[1:]  # every field of both tables: all but the symbol


def _table(name: str, fields: Sequence[str], bar_time: str = "") -> str:
    blobs = "".join(f",\n    {field} BLOB NOT NULL" for field in fields)
    return (f"CREATE TABLE {name} (\n    seq INTEGER PRIMARY KEY,{bar_time}\n"
            f"    symbols TEXT NOT NULL{blobs}\n)")


# Version 8: seq, the update; symbols, a JSON list; a BLOB per field, an entry per symbol.
# Made under these names by migration 8, which renames them (service.state.schema).
PACKED_TABLES = (
    _table("packed_decisions", DECISION_FIELDS),
    _table("packed_instrument_history", HISTORY_FIELDS, "\n    bar_time TEXT NOT NULL,"),
)


def _insert(table: str, leading: Sequence[str], fields: Sequence[str]) -> str:
    columns = (*leading, "symbols", *fields)
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({','.join('?' * len(columns))})"


_INSERT_DECISIONS = _insert("decisions", ("seq",), DECISION_FIELDS)
_INSERT_HISTORY = _insert("instrument_history", ("seq", "bar_time"), HISTORY_FIELDS)


class UpdateColumns(NamedTuple):
    """An update's decisions packed: the symbols' TEXT column and each field's BLOB."""

    symbols: str
    blobs: dict[str, bytes]


# -- writing (inside StateStore's update transaction) -------------------------------------


def pack(decisions: Sequence[DecisionRow] | DecisionColumns) -> UpdateColumns | None:
    """The columns of these decisions, in their order; None for none (no row is written)."""
    if not isinstance(decisions, DecisionColumns):
        decisions = DecisionColumns.of(decisions)
    names = decisions.symbol
    if not names:
        return None
    if len(set(names)) != len(names):
        raise sqlite3.IntegrityError("UNIQUE constraint failed: decisions.seq, decisions.symbol")
    blobs = {field: _blob(field, getattr(decisions, field)) for field in _FIELDS}
    return UpdateColumns(packed.symbols(names), blobs)


def _blob(field: str, values: Sequence[Any]) -> bytes:
    """The little-endian int64 or float64 BLOB of a field's values (struct: faster than
    array here); a NaN refused as version 7's NOT NULL refused it."""
    if field in INTEGER_FIELDS:
        return struct.pack(f"<{len(values)}q", *values)
    total = sum(values)  # NaN when one is (or when inf and -inf meet: then looked at)
    if math.isnan(total) and any(map(math.isnan, values)):
        table = "decisions" if field in DECISION_FIELDS else "instrument_history"
        raise sqlite3.IntegrityError(f"NOT NULL constraint failed: {table}.{field}")
    return struct.pack(f"<{len(values)}d", *values)


def write_decisions(conn: sqlite3.Connection, seq: int, columns: UpdateColumns | None) -> None:
    """Update `seq`'s row of decisions (none without decisions)."""
    if columns is not None:
        blobs = columns.blobs
        conn.execute(_INSERT_DECISIONS, (seq, columns.symbols, *map(blobs.get, DECISION_FIELDS)))


def write_history(
    conn: sqlite3.Connection, seq: int, bar_time: str, columns: UpdateColumns | None
) -> None:
    """Update `seq`'s row of instrument history (none without decisions)."""
    if columns is not None:
        blobs = columns.blobs
        conn.execute(_INSERT_HISTORY,
                     (seq, bar_time, columns.symbols, *map(blobs.get, HISTORY_FIELDS)))


# -- reading ---------------------------------------------------------------------------------


def read_decisions(conn: sqlite3.Connection, seq: int) -> list[DecisionRow]:
    """Update `seq`'s decisions by symbol; none for an update without decisions."""
    rows = decisions_at(conn, seq, DECISION_FIELDS)
    return [DecisionRow(s, int(r), p, m, v, bool(c), w, q) for s, r, p, m, v, c, w, q in rows]


def decisions_at(
    conn: sqlite3.Connection, seq: int, fields: Sequence[str]
) -> list[tuple[Any, ...]]:
    """(symbol, *fields) of each of update `seq`'s decisions, by symbol."""
    query = f"SELECT symbols, {', '.join(fields)} FROM decisions WHERE seq = ?"
    row = conn.execute(query, (seq,)).fetchone()
    if row is None:
        return []
    return sorted(zip(*_columns(row, fields, f"update {seq}'s decisions"), strict=True))


def latest_values(
    conn: sqlite3.Connection, symbols: Collection[str], field: str
) -> dict[str, Any]:
    """Each of `symbols`' `field` in its newest decision, the rows read newest first until
    every symbol is found; a symbol with no decision retained has none."""
    wanted: set[str] = set(symbols)
    found: dict[str, Any] = {}
    if not wanted:
        return found
    query = f"SELECT seq, symbols, {field} FROM decisions ORDER BY seq DESC"
    for seq, names, blob in conn.execute(query):
        for symbol, value in zip(*_columns((names, blob), (field,), f"update {seq}'s decisions"),
                                 strict=True):
            if symbol in wanted:
                found[symbol] = value
                wanted.discard(symbol)
        if not wanted:
            break
    return found


def read_history(conn: sqlite3.Connection) -> Iterator[tuple[Any, ...]]:
    """Every instrument_history entry as version 7's row (seq, symbol, bar_time, *fields),
    by seq, then symbol."""
    query = f"SELECT seq, bar_time, symbols, {', '.join(HISTORY_FIELDS)} FROM instrument_history"
    for seq, bar_time, *row in conn.execute(query + " ORDER BY seq"):
        entries = zip(*_columns(row, HISTORY_FIELDS, f"update {seq}'s instrument history"),
                      strict=True)
        for symbol, *values in sorted(entries):
            yield seq, symbol, bar_time, *values


def _columns(row: Sequence[Any], fields: Sequence[str], where: str) -> list[Sequence[Any]]:
    """The symbols of a row (symbols, *blobs) and each field's values, in the row's order."""
    names = list(map(str, packed.read_symbols(row[0], where)))
    return [names, *(_values(field, blob, len(names), where)
                     for field, blob in zip(fields, row[1:], strict=True))]


def _values(field: str, blob: bytes, count: int, where: str) -> Sequence[Any]:
    if field in INTEGER_FIELDS:
        return packed.read_numbers(packed.INT64, blob, count, where)
    # + 0.0: -0.0 reads back as 0.0, as SQLite gave it back from a REAL column
    return [v + 0.0 for v in packed.read_numbers(packed.FLOAT64, blob, count, where)]


# -- migration 8 -----------------------------------------------------------------------------


def pack_tables(conn: sqlite3.Connection) -> None:
    """Version 7's `decisions` and `instrument_history` (a row per seq and symbol) into one
    row per seq each, under the same names, inside the caller's transaction: every entry
    keeps its symbol, seq and values, so every reader reads the same back."""
    with packed.replacing(conn, PACKED_TABLES, ("decisions", "instrument_history")):
        _pack_decisions(conn)
        _pack_history(conn)


def _pack_decisions(conn: sqlite3.Connection) -> None:
    decisions = conn.execute(f"SELECT seq, symbol, {', '.join(DECISION_FIELDS)} FROM decisions "
                             "ORDER BY seq, symbol")
    for seq, rows in groupby(decisions, key=itemgetter(0)):
        _, names, *columns = zip(*rows, strict=True)
        conn.execute(_insert("packed_decisions", ("seq",), DECISION_FIELDS),
                     (seq, *_packed(names, DECISION_FIELDS, columns)))


def _pack_history(conn: sqlite3.Connection) -> None:
    history = conn.execute(f"SELECT seq, bar_time, symbol, {', '.join(HISTORY_FIELDS)} "
                           "FROM instrument_history ORDER BY seq, symbol")
    for seq, rows in groupby(history, key=itemgetter(0)):
        _, times, names, *columns = zip(*rows, strict=True)
        if len(set(times)) != 1:  # every version wrote its update's bar time on every row
            raise UnusableStateError(f"update {seq}'s instrument history holds bar times "
                                     f"{sorted(set(times))}, one expected; restore the "
                                     "database from a backup")
        conn.execute(_insert("packed_instrument_history", ("seq", "bar_time"), HISTORY_FIELDS),
                     (seq, times[0], *_packed(names, HISTORY_FIELDS, columns)))

def _packed(names: Sequence[str], fields: Sequence[str],
            columns: Sequence[Sequence[Any]]) -> list[Any]:
    return [packed.symbols(names), *(_blob(field, values)
                                     for field, values in zip(fields, columns, strict=True))]
