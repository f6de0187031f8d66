"""The returns and windows packed one row per update (schema version 7) give every retained
checkpoint the window the per-row tables of version 6 gave it, bit for bit: through
warm-ups, catch-ups, a symbol removed and added again, pruning, a restart, and the
migration of a version 6 (and 4) database; and an update writes them in a bounded number
of statements however many instruments it holds."""

from __future__ import annotations

import json
import sqlite3
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from service.state import returns_rows, schema
from service.state.records import Checkpoint, WindowWrite
from service.state.store import SCHEMA_VERSION, StateStore
from tests.service.sql_trace import statements_of

T0 = datetime(2026, 1, 5, 14, 30, tzinfo=UTC)
WINDOW = 8

# Version 6's tables and code, verbatim in what they store and read: the reference.
V6_SQL = """
CREATE TABLE returns (seq INTEGER NOT NULL, symbol TEXT NOT NULL, idx INTEGER NOT NULL,
    value REAL NOT NULL, PRIMARY KEY (seq, symbol, idx)) WITHOUT ROWID;
CREATE TABLE windows (seq INTEGER NOT NULL, symbol TEXT NOT NULL, start INTEGER NOT NULL,
    stop INTEGER NOT NULL, PRIMARY KEY (seq, symbol)) WITHOUT ROWID;
"""


class PerRowTables:
    """Schema version 6's returns and windows: a row per instrument, in a database apart."""

    def __init__(self) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.executescript(V6_SQL)
        self.stops: dict[str, int] = {}

    def write(self, seq: int, windows: dict[str, WindowWrite]) -> None:
        for symbol, window in windows.items():
            stop = self.stops.get(symbol, 0)
            self.conn.executemany("INSERT INTO returns VALUES (?,?,?,?)", [
                (seq, symbol, stop + i, float(v)) for i, v in enumerate(window.fresh.tolist())])
            self.stops[symbol] = stop = stop + len(window.fresh)
            self.conn.execute("INSERT INTO windows VALUES (?,?,?,?)",
                              (seq, symbol, stop - window.length, stop))

    def prune(self, seq: int, cutoff: int) -> None:
        self.conn.execute("DELETE FROM windows WHERE seq <= ?", (cutoff,))
        if seq % returns_rows.PRUNE_EVERY == 0:
            self.conn.execute(
                "DELETE FROM returns WHERE idx < COALESCE((SELECT MIN(start) FROM windows AS w "
                "WHERE w.symbol = returns.symbol), 1 << 62)")

    def read(self, seq: int) -> dict[str, list[float]]:
        spans = self.conn.execute("SELECT symbol, start, stop FROM windows WHERE seq = ? "
                                  "ORDER BY symbol", (seq,)).fetchall()
        return {symbol: [v for (v,) in self.conn.execute(
            "SELECT value FROM returns WHERE symbol = ? AND idx >= ? AND idx < ? ORDER BY idx",
            (symbol, start, stop))] for symbol, start, stop in spans}


@dataclass
class Market:
    """Instruments whose returns arrive a bar at a time (or several, after an outage);
    each window the newest WINDOW of an instrument's returns since it was (re)added."""

    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(7))
    series: dict[str, list[float]] = field(default_factory=dict)

    def add(self, *symbols: str) -> None:
        for symbol in symbols:
            self.series[symbol] = []  # cold: a re-added instrument keeps none of its past

    def remove(self, symbol: str) -> None:
        del self.series[symbol]

    def bars(self, count: int = 1) -> dict[str, WindowWrite]:
        out = {}
        for symbol in sorted(self.series):
            fresh = self.rng.normal(0.0, 0.01, count)
            self.series[symbol] = (self.series[symbol] + fresh.tolist())[-WINDOW:]
            length = len(self.series[symbol])
            out[symbol] = WindowWrite(fresh[-min(count, length):], length)
        return out

    def windows(self) -> dict[str, list[float]]:
        return {symbol: list(self.series[symbol]) for symbol in sorted(self.series)}


class Run:
    """One store and the reference fed the same updates; what every checkpoint held."""

    def __init__(self, path: Path, retention: int) -> None:
        self.path, self.retention = path, retention
        self.store = StateStore(path, retention=retention, account="alpha")
        self.reference, self.market = PerRowTables(), Market()
        self.seq, self.expected = 0, {}  # type: ignore[var-annotated]

    def update(self, count: int = 1) -> None:
        windows = self.market.bars(count)
        self.seq += 1
        checkpoint = Checkpoint(self.seq, T0, "h", "numpy", "cpu", "float64", 1.0, 1.0, b"m", {})
        self.store.commit_update(checkpoint, [], [], windows=windows)
        self.reference.write(self.seq, windows)
        self.reference.prune(self.seq, self.seq - self.retention)
        self.expected[self.seq] = self.market.windows()

    def reopen(self) -> None:
        """A restart: the next idx of every symbol is read back from the packed rows."""
        self.store.close()
        self.store = StateStore(self.path, retention=self.retention, account="alpha")

    def check_every_retained_checkpoint(self) -> None:
        seqs = self.store.checkpoint_seqs()
        assert seqs == list(range(max(1, self.seq - self.retention + 1), self.seq + 1))
        for seq in seqs:
            got = self.store.windows(seq)
            assert list(got) == list(self.expected[seq])  # symbol order too
            assert bits(got) == bits(self.reference.read(seq)) == bits(self.expected[seq]), seq


def bits(windows: dict[str, list[float]]) -> dict[str, bytes]:
    return {symbol: struct.pack(f"<{len(v)}d", *v) for symbol, v in windows.items()}


def packed_rows(conn: sqlite3.Connection) -> dict[int, list[tuple[str, int]]]:
    """(symbol, idx) of every return each packed row holds, by the row's seq."""
    return {seq: list(zip(json.loads(names), np.frombuffer(idx, "<i8").tolist(), strict=True))
            for seq, names, idx in conn.execute("SELECT seq, symbols, idx FROM returns")}


def floors(conn: sqlite3.Connection) -> dict[str, int]:
    """Each symbol's lowest start over the windows of the retained checkpoints."""
    out: dict[str, int] = {}
    for names, starts in conn.execute("SELECT symbols, starts FROM windows"):
        for symbol, start in zip(json.loads(names), np.frombuffer(starts, "<i8").tolist(),
                                 strict=True):
            out[symbol] = min(start, out.get(symbol, start))
    return out


def scenario(run: Run) -> Iterator[None]:
    """Warm-ups (windows shorter than WINDOW), a catch-up longer than the window, a symbol
    removed and added again, a restart; yields after each phase."""
    run.market.add("SPY", "QQQ", "GLD")
    for _ in range(WINDOW + 3):
        run.update()
    yield
    run.update(count=3 * WINDOW)
    run.market.remove("GLD")
    for _ in range(5):
        run.update()
    run.market.add("GLD", "IWM")  # GLD again, cold, numbered on after its old returns
    for _ in range(WINDOW - 2):
        run.update()
    yield
    run.reopen()
    for _ in range(2 * returns_rows.PRUNE_EVERY + 5):
        run.update()
    yield


def test_packed_rows_give_every_window_the_per_row_tables_gave(tmp_path: Path) -> None:
    run = Run(tmp_path / "alpha.sqlite", retention=500)
    for _ in scenario(run):
        run.check_every_retained_checkpoint()
    # one row per update in each table, whatever the instruments
    conn = run.store._conn
    assert conn.execute("SELECT COUNT(*) FROM returns").fetchone()[0] == run.seq
    assert conn.execute("SELECT COUNT(*) FROM windows").fetchone()[0] == run.seq


def test_pruning_deletes_exactly_the_rows_no_retained_window_reaches(tmp_path: Path) -> None:
    run = Run(tmp_path / "alpha.sqlite", retention=12)
    for _ in scenario(run):
        run.check_every_retained_checkpoint()
    conn = run.store._conn
    while (run.seq + 1) % returns_rows.PRUNE_EVERY:
        run.update()
    before = packed_rows(conn)
    run.update()  # prunes
    floor = floors(conn)
    reached = {seq for seq, returns in before.items()
               if any(symbol in floor and i >= floor[symbol] for symbol, i in returns)}
    after = packed_rows(conn)
    assert set(after) == reached | {run.seq}  # none reached is kept, every one reached is
    assert len(before) - len(reached) >= returns_rows.PRUNE_EVERY - 1  # it did delete
    run.check_every_retained_checkpoint()


def test_an_update_writes_its_returns_in_a_bounded_number_of_statements(tmp_path: Path) -> None:
    counts = []
    for instruments in (3, 268):
        run = Run(tmp_path / f"{instruments}.sqlite", retention=500)
        run.market.add(*(f"S{i:03d}" for i in range(instruments)))
        run.update()
        statements = statements_of(run.store._conn, run.update)
        counts.append(len(statements))
        touching = [s for s in statements if "returns" in s or "windows" in s]
        assert len(touching) == 3, touching  # the returns row, the windows row, the pruning
    assert counts[0] == counts[1], counts


def old_database(tmp_path: Path, version_sql: str, version: int) -> Run:
    """A run whose database is then given the reference's rows in the tables of `version`
    (`version_sql` copies them from the attached reference `ref`): as that version left it."""
    run = Run(tmp_path / "alpha.sqlite", retention=20)
    for _ in scenario(run):
        pass
    run.store.close()
    dump = tmp_path / "reference.sqlite"
    run.reference.conn.commit()
    run.reference.conn.execute("VACUUM INTO ?", (str(dump),))
    with sqlite3.connect(run.path) as conn:
        conn.execute("ATTACH ? AS ref", (str(dump),))
        conn.executescript("DROP TABLE returns; DROP TABLE windows;" + version_sql)
        # and the per-row decisions tables every version before 8 had (empty: no decisions)
        conn.executescript("DROP TABLE decisions; DROP TABLE instrument_history;"
                           + schema.SCHEMA + schema.HISTORY_SCHEMA)
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
    conn.close()
    return run


def test_a_version_6_database_migrates_and_every_window_reads_back(tmp_path: Path) -> None:
    run = old_database(tmp_path, V6_SQL + "INSERT INTO returns SELECT * FROM ref.returns;"
                       "INSERT INTO windows SELECT * FROM ref.windows;", 6)
    run.reopen()
    assert run.store.meta("schema_version") == str(SCHEMA_VERSION)
    run.check_every_retained_checkpoint()
    for _ in range(returns_rows.PRUNE_EVERY + 3):  # numbered on after the migrated rows
        run.update()
    run.check_every_retained_checkpoint()


def test_a_version_4_database_keyed_by_symbol_migrates_and_every_window_reads_back(
    tmp_path: Path,
) -> None:
    run = old_database(tmp_path, (
        "CREATE TABLE returns (symbol TEXT NOT NULL, idx INTEGER NOT NULL, value REAL NOT "
        "NULL, PRIMARY KEY (symbol, idx)) WITHOUT ROWID;" + V6_SQL.split(";")[1] + ";"
        "INSERT INTO returns SELECT symbol, idx, value FROM ref.returns;"
        "INSERT INTO windows SELECT * FROM ref.windows;"), 4)
    run.reopen()
    assert run.store.meta("schema_version") == str(SCHEMA_VERSION)
    run.check_every_retained_checkpoint()
    for _ in range(3):
        run.update()
    run.check_every_retained_checkpoint()
