"""Each instrument's returns stored once, and the window every checkpoint read from them.

A checkpoint used to hold every instrument's whole window (T returns of 8 bytes, 2 KB at
T = 256) although only the newest return differs from the checkpoint before. Now an update
appends the returns that arrived since the last checkpoint to `returns` (symbol, idx):
the idx-th return of that symbol, numbered on for as long as the database has rows of it,
so a symbol removed and added again continues after its old rows instead of overwriting
what an older checkpoint reads; and it records its window as `windows` (seq, symbol,
start, stop), the rows [start, stop). Both in the checkpoint's own transaction, so a crash
leaves neither. Rows no retained checkpoint's window reaches are deleted every
PRUNE_EVERY updates.

The rows are keyed by the update that wrote them first (seq, symbol, idx), so an update's
new returns, one per instrument, fill one or two pages at the end of the table instead of
one page per instrument (schema version 5). Writes are every bar; reads are rare (a resume,
a replay) and read the table in one pass, as pruning does.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from service.state.errors import UnusableStateError
from service.state.records import WindowWrite

PRUNE_EVERY = 64  # updates between deletions of returns no retained window reaches


class ReturnsRows:
    """The returns and windows tables of one database; the next idx of every symbol is
    read once, on the first write (only this process appends to this database), and then
    kept. It is updated only once the transaction that took the numbers has committed: a
    rolled back update leaves it as the database is."""

    def __init__(self) -> None:
        self._stops: dict[str, int] | None = None

    def write(
        self, conn: sqlite3.Connection, seq: int, windows: Mapping[str, WindowWrite]
    ) -> dict[str, int]:
        """Appends each symbol's fresh returns and records checkpoint `seq`'s windows,
        inside the caller's transaction; the new next idx of each symbol, for `committed`."""
        known = self._known_stops(conn)
        stops: dict[str, int] = {}
        rows: list[tuple[int, str, int, float]] = []
        for symbol, window in windows.items():
            stop = known.get(symbol, 0)
            fresh = window.fresh.tolist()
            rows.extend((seq, symbol, stop + i, float(v)) for i, v in enumerate(fresh))
            stops[symbol] = stop + len(fresh)
            if window.length > stops[symbol]:
                raise ValueError(
                    f"{symbol}: a window of {window.length} returns, {stops[symbol]} stored"
                )
        conn.executemany("INSERT INTO returns VALUES (?,?,?,?)", rows)
        conn.executemany(
            "INSERT INTO windows VALUES (?,?,?,?)",
            [(seq, s, stops[s] - w.length, stops[s]) for s, w in windows.items()],
        )
        return stops

    def committed(self, stops: Mapping[str, int]) -> None:
        """The transaction `write` ran in committed: its idx numbers are taken."""
        if self._stops is not None:
            self._stops.update(stops)

    def _known_stops(self, conn: sqlite3.Connection) -> dict[str, int]:
        if self._stops is None:
            rows = conn.execute("SELECT symbol, MAX(idx) + 1 FROM returns GROUP BY symbol")
            self._stops = {str(symbol): int(stop) for symbol, stop in rows}
        return self._stops


def read_windows(conn: sqlite3.Connection, seq: int) -> dict[str, list[float]]:
    """Checkpoint `seq`'s window of every instrument, oldest return first (none for a
    checkpoint written before schema version 4: its windows are in its blob). Plain floats:
    the supervisor and `status` import this package without numpy."""
    spans = conn.execute(
        "SELECT symbol, start, stop FROM windows WHERE seq = ? ORDER BY symbol", (seq,)
    ).fetchall()
    if not spans:
        return {}
    # One pass over the returns (CROSS JOIN keeps them the outer loop), each row matched
    # to its symbol's window by the windows table's key.
    rows = conn.execute(
        "SELECT r.symbol, r.idx, r.value FROM returns AS r CROSS JOIN windows AS w "
        "ON w.seq = ? AND w.symbol = r.symbol AND r.idx >= w.start AND r.idx < w.stop",
        (seq,),
    )
    found: dict[str, dict[int, float]] = {symbol: {} for symbol, _, _ in spans}
    for symbol, idx, value in rows:
        found[symbol][idx] = value
    out: dict[str, list[float]] = {}
    for symbol, start, stop in spans:
        values = found[symbol]
        if len(values) != stop - start:
            raise UnusableStateError(
                f"checkpoint {seq}: {symbol}'s window needs returns {start} to {stop - 1}, "
                f"the database holds {len(values)} of them; restore it from a backup"
            )
        out[symbol] = [values[i] for i in range(start, stop)]
    return out


def prune(conn: sqlite3.Connection, seq: int, cutoff: int) -> None:
    """Drops the windows of checkpoints up to `cutoff` and, every PRUNE_EVERY updates, the
    returns that no remaining window reaches."""
    conn.execute("DELETE FROM windows WHERE seq <= ?", (cutoff,))
    if seq % PRUNE_EVERY:
        return
    # Each symbol's lowest idx a remaining window reads, then one pass over the returns. A
    # symbol in no remaining window (removed long ago) loses all its rows: no checkpoint
    # reads them, so numbering it again from 0, should it come back, overwrites nothing
    # anyone reads.
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS return_floors "
                 "(symbol TEXT PRIMARY KEY, floor INTEGER NOT NULL) WITHOUT ROWID")
    conn.execute("DELETE FROM temp.return_floors")
    conn.execute("INSERT INTO temp.return_floors SELECT symbol, MIN(start) FROM windows "
                 "GROUP BY symbol")
    conn.execute("DELETE FROM returns WHERE idx < COALESCE((SELECT floor FROM "
                 "temp.return_floors AS f WHERE f.symbol = returns.symbol), 1 << 62)")
