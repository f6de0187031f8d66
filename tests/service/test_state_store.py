"""The state database: one transaction per update, no gaps, integrity checked on open."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from service.state.codec import CodecError, decode_arrays, encode_arrays
from service.state.reader import last_seq
from service.state.store import Checkpoint, DecisionRow, StateError, StateStore
from service.types import OrderIntent, OrderOutcome, OrderStatus, Side
from tests.service.sql_trace import statements_of

T0 = datetime(2026, 1, 5, 14, 30, tzinfo=UTC)


def checkpoint(seq: int, model: bytes = b"model") -> Checkpoint:
    return Checkpoint(
        seq=seq,
        bar_time=T0,
        config_hash="abc",
        backend="numpy",
        adapter="cpu",
        numerics="float64",
        cash=1.0,
        equity=2.0,
        model=model,
        book={"cursor": 0},
    )


def intent(seq: int, symbol: str = "SPY") -> OrderIntent:
    return OrderIntent(f"rt-alpha-{seq}-{symbol}", symbol, Side.BUY, 3.0)


def test_an_update_commits_checkpoint_decisions_and_intents_together(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "alpha.sqlite")
    row = DecisionRow("SPY", 0, 0.1, 0.0, 0.001, True, 0.5, 3.0)
    store.commit_update(checkpoint(1), [row], [intent(1)])
    latest = store.latest()
    assert latest is not None and latest.seq == 1 and latest.bar_time == T0
    assert [r.intent for r in store.open_intents()] == [intent(1)]
    assert last_seq(tmp_path / "alpha.sqlite") == 1


def test_a_failed_update_leaves_nothing_behind(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "alpha.sqlite")
    store.commit_update(checkpoint(1), [], [intent(1)])
    with pytest.raises(sqlite3.IntegrityError):  # the duplicate id violates the primary key
        store.commit_update(checkpoint(2), [], [intent(1)])
    assert store.checkpoint_seqs() == [1]


def test_a_sequence_gap_is_refused(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "alpha.sqlite")
    store.commit_update(checkpoint(1), [], [])
    with pytest.raises(StateError, match="does not follow 1"):
        store.commit_update(checkpoint(3), [], [])


def test_outcomes_settle_intents(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "alpha.sqlite")
    store.commit_update(checkpoint(1), [], [intent(1), intent(1, "QQQ")])
    store.record_outcomes([OrderOutcome("rt-alpha-1-SPY", OrderStatus.FILLED, "b1", 3.0, 100.0),
                           OrderOutcome("rt-alpha-1-QQQ", OrderStatus.UNKNOWN)])
    [still_open] = store.open_intents()
    assert still_open.intent.symbol == "QQQ" and still_open.status is OrderStatus.UNKNOWN


FULL, NORMAL = 2, 1  # PRAGMA synchronous levels


def test_a_checkpoint_is_synced_and_outcomes_are_not(tmp_path: Path) -> None:
    """The checkpoint's COMMIT syncs the WAL (synchronous FULL): no intent the broker may
    have seen is lost to a power loss. Outcomes commit without a sync of their own (one
    fewer fsync in the orders and in the reconcile stage): one lost is re-asked of the
    broker, and the next checkpoint's sync makes it durable. FULL holds again after."""
    store = StateStore(tmp_path / "alpha.sqlite")
    conn = store._conn
    levels: list[int] = []

    def level() -> None:
        levels.append(conn.execute("PRAGMA synchronous").fetchone()[0])

    store.commit_update(checkpoint(1), [], [intent(1)], inside=level)
    assert levels == [FULL]
    outcome = OrderOutcome("rt-alpha-1-SPY", OrderStatus.FILLED, "b1", 3.0, 100.0)
    ran = statements_of(conn, lambda: store.record_outcomes([outcome]))
    assert [s.split(" = ")[-1] for s in ran if s.startswith("PRAGMA synchronous")] == [
        "NORMAL", "FULL"]
    assert ran.index("PRAGMA synchronous = NORMAL") < ran.index("BEGIN IMMEDIATE")
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == FULL
    assert store.open_intents() == []


def test_outcomes_that_fail_to_record_leave_the_database_synced_as_before(
    tmp_path: Path,
) -> None:
    store = StateStore(tmp_path / "alpha.sqlite")
    store.commit_update(checkpoint(1), [], [intent(1)])
    broken = OrderOutcome("rt-alpha-1-SPY", None, "b1", 3.0, 100.0)  # type: ignore[arg-type]
    with pytest.raises(AttributeError):  # its status has no value: raised mid-transaction
        store.record_outcomes([broken])
    conn = store._conn
    assert not conn.in_transaction
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == FULL
    assert len(store.open_intents()) == 1


def test_retention_keeps_the_last_n_checkpoints(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "alpha.sqlite", retention=3)
    for seq in range(1, 7):
        store.commit_update(checkpoint(seq), [], [])
    assert store.checkpoint_seqs() == [4, 5, 6]


def test_state_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "alpha.sqlite"
    store = StateStore(path)
    store.commit_update(checkpoint(1, model=b"\x00\x01"), [], [])
    store.close()
    latest = StateStore(path).latest()
    assert latest is not None and latest.model == b"\x00\x01"


def test_a_corrupt_database_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "alpha.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StateError, match="move it aside"):
        StateStore(path)


def test_array_encoding_is_byte_deterministic_and_round_trips() -> None:
    arrays = {"b": np.arange(3.0), "a": np.eye(2, dtype=np.float32)}
    blob = encode_arrays(arrays)
    assert blob == encode_arrays(dict(reversed(arrays.items())))
    decoded = decode_arrays(blob)
    assert set(decoded) == {"a", "b"} and decoded["a"].dtype == np.float32
    np.testing.assert_array_equal(decoded["b"], arrays["b"])
    with pytest.raises(CodecError, match="truncated"):
        decode_arrays(blob[:-4])


def test_the_wal_is_copied_back_without_waiting_for_a_reader(tmp_path: Path) -> None:
    """The copy after a bar (StateStore.backfill_wal) is PASSIVE: a reader on an older
    snapshot (`status`, the web page) keeps what it reads in the WAL, and the copy
    returns at once with what it could copy, for the next one to finish."""
    store = StateStore(tmp_path / "alpha.sqlite")
    store.commit_update(checkpoint(1), [], [])
    assert store.backfill_wal().complete
    reader = sqlite3.connect(tmp_path / "alpha.sqlite", isolation_level=None)
    reader.execute("BEGIN")
    assert reader.execute("SELECT MAX(seq) FROM checkpoints").fetchone() == (1,)
    store.commit_update(checkpoint(2), [], [])
    held = store.backfill_wal()
    assert held.frames > 0 and not held.complete  # the reader's snapshot is before seq 2
    assert store.meta("wal_restarts") == "1"  # not started afresh under the reader
    reader.execute("COMMIT")
    reader.close()
    assert store.backfill_wal().complete
    assert store.meta("wal_restarts") == "2"


def test_a_wal_copied_back_is_started_afresh_off_the_bar_with_one_page(tmp_path: Path) -> None:
    """The first write into a WAL just copied back costs more than the next ones, so the
    copy makes it itself: a page of `meta` that changes (a write that changed nothing
    would write nothing), and the bar's writes come after it."""
    store = StateStore(tmp_path / "alpha.sqlite")
    for seq in (1, 2, 3):
        store.commit_update(checkpoint(seq), [], [])
        assert store.backfill_wal().complete
        assert store.meta("wal_restarts") == str(seq)
        # what the WAL holds now: that page (and the first time the new key's other)
        frames = 1 if seq > 1 else 2
        assert store._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone() == (
            0, frames, frames)


def test_pruning_a_checkpoint_does_not_write_its_pages_again(tmp_path: Path) -> None:
    """Once retention prunes the oldest checkpoint with each update, its freed pages are
    not written, zeroed, into the WAL beside the new checkpoint (SQLite's secure_delete,
    on in Debian's build): the update after a 400 KB checkpoint writes a few pages."""
    store = StateStore(tmp_path / "alpha.sqlite", retention=1)
    store.commit_update(checkpoint(1, model=bytes(range(256)) * 1600), [], [])  # 400 KB
    wal = store.empty_wal()
    store.commit_update(checkpoint(2), [], [])  # prunes checkpoint 1
    assert store.checkpoint_seqs() == [2]
    pages = wal.stat().st_size // 4096
    assert pages < 20, f"{pages} pages written to prune a 100-page checkpoint"
