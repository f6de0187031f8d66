"""Decisions and instrument history packed one row per update (schema version 8) read back
as the per-row tables of version 7 gave them, bit for bit, through every reader (the
store's decisions, the instruments' history, `status`): with values SQLite changes (-0.0,
an int in a REAL column), a symbol removed and added again, instruments out of an update's
batch, updates without decisions, both prunings, and the migration of a version 7
database; what version 7 refused is refused the same; an update writes each table with one
statement however many instruments it holds."""

from __future__ import annotations

import math
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from service.state import history, schema
from service.state.history import read_instrument_history
from service.state.status_reads import read_snapshot
from service.state.store import (
    Checkpoint,
    DecisionColumns,
    DecisionRow,
    StateStore,
    UnusableStateError,
)
from tests.service.sql_trace import statements_of

T0 = datetime(2026, 1, 5, 14, 30, tzinfo=UTC)
RETENTION = 6  # checkpoints, and their decisions
HISTORY_RETENTION = 9  # instrument history, in updates
SPECIAL = [-0.0, 0.0, 5e-324, -1e308, math.inf, -math.inf, 7, 1 / 3]  # 7: an int

# Version 7's tables and code, verbatim in what they store and read: the reference.
V7_SQL = """
CREATE TABLE decisions (seq INTEGER NOT NULL, symbol TEXT NOT NULL, regime INTEGER NOT NULL,
    p_turbulent REAL NOT NULL, pred_mean REAL NOT NULL, pred_vol REAL NOT NULL,
    converged INTEGER NOT NULL, target_weight REAL NOT NULL, target_qty REAL NOT NULL,
    PRIMARY KEY (seq, symbol));
CREATE TABLE instrument_history (seq INTEGER NOT NULL, symbol TEXT NOT NULL,
    bar_time TEXT NOT NULL, close REAL NOT NULL, p_turbulent REAL NOT NULL,
    p_turbulent_sd REAL NOT NULL, regime INTEGER NOT NULL, converged INTEGER NOT NULL,
    target_qty REAL NOT NULL, position_qty REAL NOT NULL, PRIMARY KEY (seq, symbol));
"""


class PerRowTables:
    """Version 7's decisions and instrument_history: a row per instrument and update."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = sqlite3.connect(path)
        self.conn.executescript(V7_SQL)

    def write(self, seq: int, when: str, decisions: list[DecisionRow], cutoff: int) -> None:
        with self.conn:
            self.conn.executemany("INSERT INTO decisions VALUES (?,?,?,?,?,?,?,?,?)", [
                (seq, d.symbol, d.regime, d.p_turbulent, d.pred_mean, d.pred_vol,
                 int(d.converged), d.target_weight, d.target_qty) for d in decisions])
            self.conn.executemany("INSERT INTO instrument_history VALUES (?,?,?,?,?,?,?,?,?,?)", [
                (seq, d.symbol, when, d.close, d.p_turbulent, d.p_turbulent_sd, d.regime,
                 int(d.converged), d.target_qty, d.position_qty) for d in decisions])
            self.conn.execute("DELETE FROM instrument_history WHERE seq <= ?",
                              (seq - HISTORY_RETENTION,))
            self.conn.execute("DELETE FROM decisions WHERE seq <= ?", (cutoff,))

    def decisions(self, seq: int) -> list[DecisionRow]:
        rows = self.conn.execute(
            "SELECT symbol, regime, p_turbulent, pred_mean, pred_vol, converged, target_weight, "
            "target_qty FROM decisions WHERE seq = ? ORDER BY symbol", (seq,))
        return [DecisionRow(r[0], int(r[1]), r[2], r[3], r[4], bool(r[5]), r[6], r[7])
                for r in rows]


class Run:
    """One store and the reference fed the same updates."""

    def __init__(self, folder: Path, instruments: list[str]) -> None:
        self.path = folder / "alpha.sqlite"
        self.store = StateStore(self.path, retention=RETENTION, account="alpha")
        self.reference = PerRowTables(folder / "reference.sqlite")
        self.rng = np.random.default_rng(11)
        self.active, self.seq = list(instruments), 0

    def update(self, decided: list[str] | None = None) -> None:
        self.seq += 1
        when = T0 + timedelta(minutes=self.seq)
        names = self.active if decided is None else decided
        decisions = [self.decision(symbol) for symbol in names]
        book = {"cursor": 0, "instruments": {s: {"last_close": 100.0, "regime": 1,
                "decision": {"invested": True, "target_weight": 0.1, "target_qty": 2.0}}
                for s in [*self.active, "NEVER"]}}  # fmt: skip
        # the strategy's form (columns) on odd updates, rows on even ones: the same tables
        given = DecisionColumns.of(decisions) if self.seq % 2 else decisions
        self.store.commit_update(Checkpoint(self.seq, when, "h", "numpy", "cpu", "float64",
                                            1.0, 2.0, b"m", book), given, [])
        self.reference.write(self.seq, when.isoformat(), decisions, self.seq - RETENTION)

    def decision(self, symbol: str) -> DecisionRow:
        """Random values, some of them those SQLite changes or keeps apart."""
        values = [float(v) for v in self.rng.normal(0.0, 3.0, 8)]
        for i in np.flatnonzero(self.rng.uniform(size=8) < 0.3).tolist():
            values[i] = SPECIAL[int(self.rng.integers(len(SPECIAL)))]
        regime, converged = int(self.rng.integers(3)), bool(self.rng.uniform() < 0.8)
        return DecisionRow(symbol, regime, values[0], values[1], values[2], converged,
                           values[3], values[4], values[5], values[6], values[7])

    def as_version_7(self, path: Path) -> Path:
        """A copy of the store's database with the reference's per-row tables, version 7."""
        with sqlite3.connect(self.path) as conn:
            conn.execute("VACUUM INTO ?", (str(path),))
        conn.close()
        with sqlite3.connect(path) as conn:
            conn.execute("ATTACH ? AS ref", (str(self.reference.path),))
            conn.executescript(
                "DROP TABLE decisions; DROP TABLE instrument_history;" + V7_SQL
                + "INSERT INTO decisions SELECT * FROM ref.decisions;"
                "INSERT INTO instrument_history SELECT * FROM ref.instrument_history;")
            conn.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
        conn.close()
        return path

    def check(self, folder: Path) -> None:
        """Every reader, packed, against the reference, and the reference migrated."""
        seqs = self.store.checkpoint_seqs()
        assert seqs == list(range(max(1, self.seq - RETENTION + 1), self.seq + 1))
        for seq in range(1, self.seq + 2):
            assert repr(self.store.decisions(seq)) == repr(self.reference.decisions(seq)), seq
        old = self.as_version_7(folder / f"v7-{self.seq}.sqlite")
        readers = (lambda p: repr(read_instrument_history(p)), lambda p: repr(read_snapshot(p)))
        for read in readers:
            assert read(self.path) == read(old)
        expected = [read(old) for read in readers]
        migrated = StateStore(old, retention=RETENTION, account="alpha")
        assert migrated.meta("schema_version") == str(schema.SCHEMA_VERSION)
        for seq in range(1, self.seq + 2):
            assert repr(migrated.decisions(seq)) == repr(self.reference.decisions(seq)), seq
        migrated.close()
        assert [read(old) for read in readers] == expected


@pytest.fixture(autouse=True)
def _history_retention(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history, "INSTRUMENT_RETENTION", HISTORY_RETENTION)


def test_every_reader_gives_what_the_per_row_tables_gave(tmp_path: Path) -> None:
    run = Run(tmp_path, ["SPY", "QQQ", "GLD", "Ünï", "spy", 'B"R\\K'])
    for _ in range(4):
        run.update()
    run.check(tmp_path)
    run.active.remove("GLD")
    for _ in range(3):
        run.update(["SPY", "Ünï"])  # the others' last decisions are older, and then pruned
    run.update([])  # an update without decisions
    run.check(tmp_path)
    run.active.append("GLD")  # added again
    for i in range(HISTORY_RETENTION):
        run.update(run.active[i % 2::2])  # half of them, in turn
    run.check(tmp_path)
    snapshot = read_snapshot(run.path)
    assert snapshot is not None
    p_turbulent = {t.symbol: t.p_turbulent for t in snapshot.targets}
    assert p_turbulent["NEVER"] is None and p_turbulent["QQQ"] is not None  # looked up
    # one row per update in each table, whatever the instruments, none without decisions
    conn = run.store._conn
    assert conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0] == RETENTION
    assert conn.execute("SELECT COUNT(*) FROM instrument_history").fetchone()[0] == (
        HISTORY_RETENTION)


def test_an_update_writes_each_table_with_one_statement(tmp_path: Path) -> None:
    counts = []
    for instruments in (3, 268):
        run = Run(tmp_path / str(instruments), [f"S{i:03d}" for i in range(instruments)])
        run.update()
        statements = statements_of(run.store._conn, run.update)
        counts.append(len(statements))
        for table in ("decisions", "instrument_history"):
            touching = [s[:40] for s in statements if table in s]
            assert len(touching) == 2, touching  # its row, its pruning
    assert counts[0] == counts[1], counts


@pytest.mark.parametrize(("field", "value", "error"), [
    ("p_turbulent", math.nan, "NOT NULL constraint failed: decisions.p_turbulent"),
    ("close", math.nan, "NOT NULL constraint failed: instrument_history.close"),
    ("symbol", "SPY", "UNIQUE constraint failed: decisions.seq, decisions.symbol"),
])
def test_what_version_7_refused_is_refused_the_same(
    tmp_path: Path, field: str, value: Any, error: str
) -> None:
    run = Run(tmp_path, ["SPY", "QQQ"])
    run.update()
    bad = [run.decision("SPY"), run.decision("QQQ")]
    bad[1] = bad[1]._replace(**{field: value})
    with pytest.raises(sqlite3.IntegrityError, match=error):
        run.reference.write(2, T0.isoformat(), bad, 0)
    for given in (bad, DecisionColumns.of(bad)):
        with pytest.raises(sqlite3.IntegrityError, match=error):
            run.store.commit_update(Checkpoint(2, T0, "h", "numpy", "cpu", "float64", 1.0,
                                               2.0, b"m", {}), given, [])
    assert run.store.checkpoint_seqs() == [1] and run.store.decisions(2) == []


def test_a_damaged_row_or_a_version_7_update_of_two_bar_times_is_refused(
    tmp_path: Path,
) -> None:
    run = Run(tmp_path, ["SPY", "QQQ"])
    run.update()
    run.update()
    old = run.as_version_7(tmp_path / "v7.sqlite")
    with sqlite3.connect(old) as conn:
        conn.execute("UPDATE instrument_history SET bar_time = 'x' "
                     "WHERE seq = 2 AND symbol = 'SPY'")
    conn.close()
    with pytest.raises(UnusableStateError, match="update 2's instrument history holds bar times"):
        StateStore(old, account="alpha")
    run.store._conn.execute("UPDATE decisions SET pred_vol = substr(pred_vol, 1, 8) WHERE seq = 2")
    with pytest.raises(UnusableStateError, match="update 2's decisions: 8 bytes of numbers"):
        run.store.decisions(2)
