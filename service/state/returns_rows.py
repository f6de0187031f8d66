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
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from service.state.errors import UnusableStateError
from service.state.records import WindowWrite

PRUNE_EVERY = 64  # updates between deletions of returns no retained window reaches


class ReturnsRows:
    """The returns and windows tables of one database; the next idx of each symbol is
    cached after the first lookup (only this process appends to this database). The cache
    is updated only once the transaction that took the numbers has committed: a rolled
    back update leaves it as the database is."""

    def __init__(self) -> None:
        self._stops: dict[str, int] = {}

    def write(
        self, conn: sqlite3.Connection, seq: int, windows: Mapping[str, WindowWrite]
    ) -> dict[str, int]:
        """Appends each symbol's fresh returns and records checkpoint `seq`'s windows,
        inside the caller's transaction; the new next idx of each symbol, for `committed`."""
        stops: dict[str, int] = {}
        rows: list[tuple[str, int, float]] = []
        for symbol, window in windows.items():
            stop = self._stop(conn, symbol)
            fresh = [float(v) for v in window.fresh.tolist()]
            rows.extend((symbol, stop + i, v) for i, v in enumerate(fresh))
            stops[symbol] = stop + len(fresh)
            if window.length > stops[symbol]:
                raise ValueError(
                    f"{symbol}: a window of {window.length} returns, {stops[symbol]} stored"
                )
        conn.executemany("INSERT INTO returns VALUES (?,?,?)", rows)
        conn.executemany(
            "INSERT INTO windows VALUES (?,?,?,?)",
            [(seq, s, stops[s] - w.length, stops[s]) for s, w in windows.items()],
        )
        return stops

    def committed(self, stops: Mapping[str, int]) -> None:
        """The transaction `write` ran in committed: its idx numbers are taken."""
        self._stops.update(stops)

    def _stop(self, conn: sqlite3.Connection, symbol: str) -> int:
        if symbol not in self._stops:
            row = conn.execute("SELECT MAX(idx) FROM returns WHERE symbol = ?", (symbol,))
            top = row.fetchone()[0]
            self._stops[symbol] = 0 if top is None else int(top) + 1
        return self._stops[symbol]


def read_windows(conn: sqlite3.Connection, seq: int) -> dict[str, list[float]]:
    """Checkpoint `seq`'s window of every instrument, oldest return first (none for a
    checkpoint written before schema version 4: its windows are in its blob). Plain floats:
    the supervisor and `status` import this package without numpy."""
    spans = conn.execute(
        "SELECT symbol, start, stop FROM windows WHERE seq = ? ORDER BY symbol", (seq,)
    ).fetchall()
    out: dict[str, list[float]] = {}
    for symbol, start, stop in spans:
        values = [v for (v,) in conn.execute(
            "SELECT value FROM returns WHERE symbol = ? AND idx >= ? AND idx < ? ORDER BY idx",
            (symbol, start, stop))]  # fmt: skip
        if len(values) != stop - start:
            raise UnusableStateError(
                f"checkpoint {seq}: {symbol}'s window needs returns {start} to {stop - 1}, "
                f"the database holds {len(values)} of them; restore it from a backup"
            )
        out[symbol] = values
    return out


def prune(conn: sqlite3.Connection, seq: int, cutoff: int) -> None:
    """Drops the windows of checkpoints up to `cutoff` and, every PRUNE_EVERY updates, the
    returns that no remaining window reaches."""
    conn.execute("DELETE FROM windows WHERE seq <= ?", (cutoff,))
    if seq % PRUNE_EVERY:
        return
    floors = conn.execute("SELECT symbol, MIN(start) FROM windows GROUP BY symbol").fetchall()
    conn.executemany("DELETE FROM returns WHERE symbol = ? AND idx < ?", floors)
    # A symbol in no remaining window (removed long ago): no checkpoint reads its rows, so
    # numbering it again from 0, should it come back, overwrites nothing anyone reads.
    conn.execute("DELETE FROM returns WHERE symbol NOT IN (SELECT symbol FROM windows)")
