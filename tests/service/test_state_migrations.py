"""A database written by the previous release (schema version 1) opens, migrates and
resumes; `status` reads it before and after; a newer version is refused."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from service.state import schema
from service.state.checkpoint_codec import (
    checkpoint_state,
    decode_model_state,
    encode_model_state,
)
from service.state.codec import encode_arrays
from service.state.status_reads import read_snapshot
from service.state.store import Checkpoint, DecisionRow, StateStore, UnusableStateError

OLD_SCHEMA = (Path(__file__).parent.parent / "data" / "state_schema_v1.sql").read_text()
BAR = datetime(2026, 1, 5, 14, 30, tzinfo=UTC)
RETURNS = np.array([0.01, -0.02, 0.005])


def old_database(path: Path) -> Path:
    """A version-1 database holding one checkpoint and one intent, as that release wrote
    them: its SQL, its blob layout, its book keys."""
    model = encode_arrays({"SPY/returns": RETURNS})
    book = {"cursor": 1, "instruments": {"SPY": {
        "last_bar_time": BAR.isoformat(), "last_close": 101.5, "regime": 0,
        "decision": {"invested": True, "target_weight": 0.5, "target_qty": 7.0}}}}
    conn = sqlite3.connect(path)
    conn.executescript(OLD_SCHEMA)
    conn.execute("INSERT INTO checkpoints VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                 (1, BAR.isoformat(), "h", "numpy", "cpu", "float64", 90_000.0, 100_000.0,
                  model, hashlib.sha256(model).hexdigest(), json.dumps(book)))
    conn.execute("INSERT INTO decisions VALUES (1, 'SPY', 0, 0.2, 0.0, 0.01, 1, 0.5, 7.0)")
    conn.execute("INSERT INTO intents (client_order_id, seq, symbol, side, qty, status) "
                 "VALUES ('rt-alpha-1-SPY', 1, 'SPY', 'buy', 7.0, 'filled')")
    conn.commit()
    conn.close()
    return path


def test_status_reads_a_database_of_the_previous_release_as_it_is(tmp_path: Path) -> None:
    snapshot = read_snapshot(old_database(tmp_path / "alpha.sqlite"))
    assert snapshot is not None and snapshot.seq == 1
    assert [(t.symbol, t.target_qty) for t in snapshot.targets] == [("SPY", 7.0)]


def test_a_database_of_the_previous_release_migrates_and_resumes(tmp_path: Path) -> None:
    path = old_database(tmp_path / "alpha.sqlite")
    before = read_snapshot(path)
    store = StateStore(path, account="alpha")
    assert store.meta("schema_version") == str(schema.SCHEMA_VERSION)
    assert read_snapshot(path) == before  # its decisions packed (version 8), read the same
    assert store.meta("account") == "alpha" and store.ids.legacy  # it made ids: they stay ours
    assert store.decisions(1) == [DecisionRow("SPY", 0, 0.2, 0.0, 0.01, True, 0.5, 7.0)]
    latest = store.latest()
    assert latest is not None
    state = decode_model_state(latest.model, latest.book)
    assert state.rotation_start == 1 and np.array_equal(state.instruments["SPY"].returns, RETURNS)
    assert state.instruments["SPY"].decision is not None and not state.instruments["SPY"].retiring
    # The old checkpoint's window was in its blob: the first new one stores all of it
    assert state.instruments["SPY"].unsaved == len(RETURNS)
    model, book, windows, carries = encode_model_state(state)
    assert windows.symbols == ["SPY"] and windows.counts == [3] and windows.lengths == [3]
    assert windows.fresh == RETURNS.astype("<f8").tobytes()
    store.commit_update(Checkpoint(2, BAR, "h", "numpy", "cpu", "float64", 90_000.0,
                                   100_000.0, model, book), [], [], windows=windows,
                        carries=carries.arrays)
    store.close()
    reopened = StateStore(path, account="alpha")
    assert reopened.checkpoint_seqs() == [1, 2] and reopened.ids.epoch == store.ids.epoch
    second = reopened.checkpoint(2)
    assert second is not None and b"SPY/returns" not in second.model
    resumed = checkpoint_state(reopened, second)
    assert np.array_equal(resumed.instruments["SPY"].returns, RETURNS)
    assert resumed.instruments["SPY"].unsaved == 0
    reopened.close()


def test_every_version_up_to_the_current_one_has_its_migration() -> None:
    assert sorted(schema.MIGRATIONS) == list(range(2, schema.SCHEMA_VERSION + 1))


def test_a_database_of_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = old_database(tmp_path / "alpha.sqlite")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()
    with pytest.raises(UnusableStateError, match="schema version 99"):
        StateStore(path, account="alpha")
