"""Each instrument's returns stored once, and the window every checkpoint read from them.

A checkpoint used to hold every instrument's whole window (T returns of 8 bytes, 2 KB at
T = 256) although only the newest return differs from the checkpoint before. Now an update
stores the returns that arrived since the last checkpoint in `returns`, each numbered
(symbol, idx): the idx-th return of that symbol, numbered on for as long as the database
has rows of it, so a symbol removed and added again continues after its old returns
instead of overwriting what an older checkpoint reads; and it records its window in
`windows` as (symbol, start, stop), the returns [start, stop). Both in the checkpoint's
own transaction, so a crash leaves neither.

Both tables hold ONE row per update (schema version 7), its returns or windows packed as
columns (service.state.packed): a JSON list of symbols and little-endian arrays, one entry
per return or window. Up to version 6 they held a row per instrument: at 268 instruments
their 536 rows cost 1.1 to 2.2 ms of every update, the two packed rows ~0.6 ms (most of it
building the columns in Python). Writes are every bar; reads are rare (a resume, a replay,
the first write of a process, pruning) and decode the retained rows in Python, numpy-free
(`status` imports this package without it): at 268 instruments, T = 256 and 500 retained
checkpoints, ~50-80 ms for a window read, ~60 ms for the first write, 30-40 ms a pruning.

Every PRUNE_EVERY updates, a row of returns none of which a retained checkpoint's window
reaches is deleted: a symbol's floor is the lowest start of its retained windows, and a
symbol in no retained window has none (no checkpoint reads it). A row keeps all its
returns while any one of them is reached; the rows stay bounded all the same, by the
oldest retained window.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Iterator, Mapping
from itertools import repeat
from operator import add, sub

from service.state import packed
from service.state.errors import UnusableStateError
from service.state.records import WindowColumns

PRUNE_EVERY = 64  # updates between deletions of returns no retained window reaches
NO_FLOOR = 1 << 62  # the floor of a symbol in no retained window: above every idx


class ReturnsRows:
    """The returns and windows tables of one database; the next idx of every symbol is
    read once, on the first write (only this process appends to this database), and then
    kept. It is updated only once the transaction that took the numbers has committed: a
    rolled back update leaves it as the database is."""

    def __init__(self) -> None:
        self._stops: dict[str, int] | None = None

    def write(self, conn: sqlite3.Connection, seq: int, windows: WindowColumns) -> dict[str, int]:
        """Stores each symbol's fresh returns and checkpoint `seq`'s windows, a row each,
        inside the caller's transaction; the new next idx of each symbol, for `committed`."""
        # Columns built by comprehensions, not a loop of statements per instrument: at 268
        # instruments this is the update's only Python work per instrument here.
        known = self._known_stops(conn)
        symbols, counts = windows.symbols, windows.counts
        firsts = list(map(known.get, symbols, repeat(0, len(symbols))))
        stops = list(map(add, firsts, counts))
        starts = list(map(sub, stops, windows.lengths))
        if min(starts, default=0) < 0:
            symbol, start, stop = next(s for s in zip(symbols, starts, stops, strict=True)
                                       if s[1] < 0)
            raise ValueError(f"{symbol}: a window of {stop - start} returns, {stop} stored")
        if any(counts):
            if counts.count(1) == len(counts):  # a bar each: the columns are at hand
                names, idx = symbols, firsts
            else:
                names = [s for s, count in zip(symbols, counts, strict=True) for _ in range(count)]
                idx = [i for first, count in zip(firsts, counts, strict=True)
                       for i in range(first, first + count)]
            conn.execute("INSERT INTO returns VALUES (?,?,?,?)",
                         (seq, packed.symbols(names), packed.ints(idx), windows.fresh))
        if symbols:
            conn.execute("INSERT INTO windows VALUES (?,?,?,?)",
                         (seq, packed.symbols(symbols), packed.ints(starts), packed.ints(stops)))
        return dict(zip(symbols, stops, strict=True))

    def committed(self, stops: Mapping[str, int]) -> None:
        """The transaction `write` ran in committed: its idx numbers are taken."""
        if self._stops is not None:
            self._stops.update(stops)

    def _known_stops(self, conn: sqlite3.Connection) -> dict[str, int]:
        if self._stops is None:
            stops: dict[str, int] = {}
            for _, names, idx, _ in _returns(conn, "SELECT seq, symbols, idx, NULL FROM returns"):
                for symbol, i in zip(names, idx, strict=True):
                    if i >= stops.get(symbol, 0):
                        stops[symbol] = i + 1
            self._stops = stops
        return self._stops


def read_windows(conn: sqlite3.Connection, seq: int) -> dict[str, list[float]]:
    """Checkpoint `seq`'s window of every instrument by symbol in symbol order, oldest
    return first (none for a checkpoint written before schema version 4: its windows are
    in its blob). Plain floats: the supervisor and `status` import this package without
    numpy."""
    row = conn.execute("SELECT symbols, starts, stops FROM windows WHERE seq = ?",
                       (seq,)).fetchone()  # fmt: skip
    if row is None:
        return {}
    spans = {symbol: (start, stop) for symbol, start, stop in _spans(seq, *row)}
    found: dict[str, dict[int, float]] = {symbol: {} for symbol in spans}
    # A return an update wrote is in that update's window, not in any older one: the rows
    # of later updates cannot hold what this window reads.
    query = "SELECT seq, symbols, idx, value FROM returns WHERE seq <= ? ORDER BY seq"
    for at, names, idx, blob in _returns(conn, query, seq):
        values = packed.read_numbers(packed.FLOAT64, blob, len(names), f"update {at}'s returns")
        for symbol, i, value in zip(names, idx, values, strict=True):
            span = spans.get(symbol)
            if span is not None and span[0] <= i < span[1]:
                found[symbol][i] = value
    out: dict[str, list[float]] = {}
    for symbol in sorted(spans):
        (start, stop), held = spans[symbol], found[symbol]
        if len(held) != stop - start:
            raise UnusableStateError(
                f"checkpoint {seq}: {symbol}'s window needs returns {start} to {stop - 1}, "
                f"the database holds {len(held)} of them; restore it from a backup"
            )
        out[symbol] = [held[i] for i in range(start, stop)]
    return out


def prune(conn: sqlite3.Connection, seq: int, cutoff: int) -> None:
    """Drops the windows of checkpoints up to `cutoff` and, every PRUNE_EVERY updates, the
    rows of returns that no remaining window reaches."""
    conn.execute("DELETE FROM windows WHERE seq <= ?", (cutoff,))
    if seq % PRUNE_EVERY:
        return
    floors: dict[str, int] = {}
    for at, names, starts in conn.execute("SELECT seq, symbols, starts FROM windows"):
        where = f"checkpoint {at}'s windows"
        symbols = packed.read_symbols(names, where)
        numbers = packed.read_numbers(packed.INT64, starts, len(symbols), where)
        for symbol, start in zip(symbols, numbers, strict=True):
            if start < floors.get(symbol, NO_FLOOR):
                floors[symbol] = start
    # A row written after `cutoff` is in its own update's window, which is retained.
    query = "SELECT seq, symbols, idx, NULL FROM returns WHERE seq <= ?"
    unreached = [(at,) for at, names, idx, _ in _returns(conn, query, cutoff)
                 if not any(i >= floors.get(symbol, NO_FLOOR)
                            for symbol, i in zip(names, idx, strict=True))]
    conn.executemany("DELETE FROM returns WHERE seq = ?", unreached)


def _spans(seq: int, names: str, starts: bytes, stops: bytes) -> Iterator[tuple[str, int, int]]:
    """(symbol, start, stop) of each window of checkpoint `seq`'s row."""
    where = f"checkpoint {seq}'s windows"
    symbols = packed.read_symbols(names, where)
    yield from zip(symbols, packed.read_numbers(packed.INT64, starts, len(symbols), where),
                   packed.read_numbers(packed.INT64, stops, len(symbols), where), strict=True)


def _returns(
    conn: sqlite3.Connection, query: str, *params: int
) -> Iterator[tuple[int, list[str], array, bytes]]:  # type: ignore[type-arg]
    """(seq, symbols, idx, value) of each row `query` selects (seq, symbols, idx, and the
    value column undecoded; b"" where the query selects NULL, the values not needed)."""
    for seq, names, idx, values in conn.execute(query, params):
        where = f"update {seq}'s returns"
        symbols = packed.read_symbols(names, where)
        numbers = packed.read_numbers(packed.INT64, idx, len(symbols), where)
        yield seq, symbols, numbers, values or b""
