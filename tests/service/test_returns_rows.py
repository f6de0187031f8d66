"""Returns are stored once per instrument and bar; every retained checkpoint still gets its
exact window back, through removals, catch-ups, pruning and a rolled-back update."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from service.model_state import InstrumentState, ModelState
from service.state import returns_rows
from service.state.checkpoint_codec import checkpoint_state, encode_model_state
from service.state.store import Checkpoint, StateStore, UnusableStateError
from service.types import Bar

T0 = datetime(2026, 1, 5, 14, 30, tzinfo=UTC)
WINDOW = 16


class Account:
    """A worker's checkpointing, without the model: bars in, one checkpoint per update."""

    def __init__(self, path: Path, symbols: list[str], retention: int = 500) -> None:
        self.store = StateStore(path, retention=retention, account="alpha")
        self.state = ModelState({s: InstrumentState(s) for s in symbols})
        self.seq, self.bar = 0, 0
        self.expected: dict[int, dict[str, np.ndarray]] = {}  # seq -> the windows it held

    def bars(self, count: int) -> None:
        """`count` new bars for every instrument (closes from the bar and symbol numbers)."""
        for symbol, instrument in self.state.instruments.items():
            new = [Bar(T0 + timedelta(minutes=self.bar + i), 1, 1, 1,
                       100.0 + np.sin(self.bar + i + len(symbol)), 1) for i in range(count)]
            instrument.append(new, WINDOW)
        self.bar += count

    def update(self, count: int = 1, fail: bool = False) -> None:
        self.bars(count)
        model, book, windows, carries = encode_model_state(self.state)
        checkpoint = Checkpoint(self.seq + 1, T0, "h", "numpy", "cpu", "float64", 1.0, 1.0,
                                model, book)  # fmt: skip

        def crash() -> None:
            raise RuntimeError("simulated crash inside the transaction")

        self.store.commit_update(checkpoint, [], [], inside=crash if fail else None,
                                 windows=windows, carries=carries.arrays)  # fmt: skip
        self.seq += 1
        self.state.saved()
        self.expected[self.seq] = {s: i.returns.copy() for s, i in self.state.instruments.items()}

    def windows_at(self, seq: int) -> dict[str, np.ndarray]:
        at = self.store.checkpoint(seq)
        assert at is not None
        state = checkpoint_state(self.store, at)
        return {s: i.returns for s, i in state.instruments.items()}

    def check_every_retained_checkpoint(self) -> None:
        for seq in self.store.checkpoint_seqs():
            got = self.windows_at(seq)
            assert set(got) == set(self.expected[seq])
            for symbol, window in self.expected[seq].items():
                assert np.array_equal(got[symbol], window), (seq, symbol)

    def stored(self) -> list[tuple[int, str, int, float]]:
        """(seq, symbol, idx, value) of every stored return, from the packed rows."""
        return stored_returns(self.store._conn)

    def rows(self) -> int:
        return len(self.stored())


def stored_returns(conn: sqlite3.Connection) -> list[tuple[int, str, int, float]]:
    """Every return the packed `returns` rows hold (schema version 7): a JSON list of
    symbols, little-endian int64 idx and float64 values, one entry per return."""
    out = []
    for seq, symbols, idx, value in conn.execute("SELECT * FROM returns ORDER BY seq"):
        numbers = np.frombuffer(idx, "<i8").tolist()
        values = np.frombuffer(value, "<f8").tolist()
        out.extend(zip([seq] * len(numbers), json.loads(symbols), numbers, values, strict=True))
    return out


def rewrite_returns(conn: sqlite3.Connection, keep: Callable[[str, int], bool],
                    change: Callable[[str, int, float], float] = lambda s, i, v: v) -> None:
    """Rewrites the packed rows in place: the returns `keep` accepts, `change`d."""
    for seq, symbols, idx, value in conn.execute("SELECT * FROM returns").fetchall():
        rows = [(s, i, change(s, i, v)) for s, i, v in zip(
            json.loads(symbols), np.frombuffer(idx, "<i8").tolist(),
            np.frombuffer(value, "<f8").tolist(), strict=True) if keep(s, i)]
        conn.execute("UPDATE returns SET symbols = ?, idx = ?, value = ? WHERE seq = ?",
                     (json.dumps([s for s, _, _ in rows]),
                      np.array([i for _, i, _ in rows], "<i8").tobytes(),
                      np.array([v for _, _, v in rows], "<f8").tobytes(), seq))


def test_each_return_is_stored_once_and_every_checkpoint_reads_its_window(
    tmp_path: Path,
) -> None:
    account = Account(tmp_path / "alpha.sqlite", ["SPY", "QQQ"])
    for _ in range(40):
        account.update()
    account.check_every_retained_checkpoint()
    # 40 bars give 39 returns per instrument, each one row, though 40 checkpoints hold
    # windows of up to 16 of them
    assert account.rows() == 2 * 39
    latest = account.store.latest()
    assert latest is not None and b"/returns" not in latest.model  # no window in the blob


def test_a_catch_up_longer_than_the_window_and_a_symbol_added_again(tmp_path: Path) -> None:
    account = Account(tmp_path / "alpha.sqlite", ["SPY", "IWM"])
    for _ in range(5):
        account.update()
    account.update(count=3 * WINDOW)  # after an outage: only the last WINDOW are kept
    del account.state.instruments["IWM"]  # removed from the rotation ...
    account.update()
    account.state.ensure(("IWM",))  # ... and added again: it starts cold, numbered on
    for _ in range(4):
        account.update()
    account.check_every_retained_checkpoint()
    idx = [i for _, symbol, i, _ in account.stored() if symbol == "IWM"]
    assert idx == list(range(len(idx)))  # one run of numbers, nothing overwritten


def test_returns_no_retained_window_reaches_are_pruned(tmp_path: Path) -> None:
    retention = 10
    account = Account(tmp_path / "alpha.sqlite", ["SPY", "QQQ", "GLD"], retention=retention)
    for _ in range(returns_rows.PRUNE_EVERY * 2):
        account.update()
    del account.state.instruments["GLD"]  # in no window once its checkpoints are pruned
    for _ in range(returns_rows.PRUNE_EVERY):
        account.update()
    account.check_every_retained_checkpoint()
    assert len(account.store.checkpoint_seqs()) == retention
    # what the oldest retained window reaches, plus the returns since, for SPY and QQQ;
    # none of GLD's, which no retained checkpoint reads
    per_symbol = WINDOW + retention - 1 + returns_rows.PRUNE_EVERY - 1
    assert 2 * (WINDOW + retention - 1) <= account.rows() <= 2 * per_symbol
    assert [r for r in account.stored() if r[1] == "GLD"] == []


def test_a_rolled_back_update_stores_nothing_and_the_next_one_numbers_on(
    tmp_path: Path,
) -> None:
    account = Account(tmp_path / "alpha.sqlite", ["SPY"])
    for _ in range(3):
        account.update()
    before = account.rows()
    with pytest.raises(RuntimeError, match="simulated crash"):
        account.update(fail=True)
    assert account.rows() == before and account.store.checkpoint_seqs() == [1, 2, 3]
    # The worker resumes from checkpoint 3 and fetches the same bar again
    resumed = account.windows_at(3)
    at = account.store.checkpoint(3)
    assert at is not None
    account.state = checkpoint_state(account.store, at)
    assert np.array_equal(resumed["SPY"], account.expected[3]["SPY"])
    account.bar -= 1
    account.update()
    account.check_every_retained_checkpoint()
    assert account.rows() == before + 1


def test_a_damaged_return_is_found_on_resume(tmp_path: Path) -> None:
    account = Account(tmp_path / "alpha.sqlite", ["SPY"])
    for _ in range(3):
        account.update()
    conn = account.store._conn
    rewrite_returns(conn, lambda s, i: True, lambda s, i, v: v + 1e-12 if i == 1 else v)
    with pytest.raises(UnusableStateError, match=r"SPY: its return window .* does not match"):
        account.windows_at(3)
    rewrite_returns(conn, lambda s, i: i != 0)
    with pytest.raises(UnusableStateError, match="SPY's window needs returns 0 to 1"):
        account.windows_at(3)


def test_bytes_per_bar(tmp_path: Path) -> None:
    """What one instrument's bar costs in the database now: its return, once, not a
    window per checkpoint (the old form grew by 8 x T bytes per instrument per update)."""
    account = Account(tmp_path / "alpha.sqlite", [f"SYM{i:03d}" for i in range(50)])
    for _ in range(60):
        account.update()
    conn = account.store._conn
    used = conn.execute("SELECT SUM(pgsize - unused) FROM dbstat WHERE name = 'returns'")
    per_return = used.fetchone()[0] / account.rows()
    assert 8 < per_return < 40  # its 8-byte value and idx, and its symbol in the JSON list
    blob = account.store.latest()
    assert blob is not None
    # the blob keeps a 4-byte checksum per instrument, whatever the window's length
    assert len(blob.model) < 50 * (32 + 120)


def wal_pages_of_one_update(account: Account) -> int:
    """Pages the next update's commit appends to the WAL (the WAL emptied first)."""
    conn = account.store._conn
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    account.update()
    _, pages, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return int(pages)


def test_an_update_writes_its_new_returns_into_a_few_pages_whatever_the_instruments(
    tmp_path: Path,
) -> None:
    """One new return per instrument is ~20 bytes of row each: keyed by the update that
    wrote them they share pages, where keyed by symbol each landed in a page of its own
    (at 200 instruments, 200 pages of 4 KB rewritten per bar for 4 KB of data)."""
    small = Account(tmp_path / "small.sqlite", [f"S{i:03d}" for i in range(20)])
    large = Account(tmp_path / "large.sqlite", [f"S{i:03d}" for i in range(200)])
    for _ in range(2 * WINDOW):  # the window is full: each update adds one row per symbol
        small.update()
        large.update()
    grown = wal_pages_of_one_update(large) - wal_pages_of_one_update(small)
    # the 180 more instruments' book entries, window digests and records and returns,
    # ~300 bytes each: 14 pages (keyed by symbol, the returns alone made it 40)
    assert grown <= 20, f"{grown} more pages for 180 more instruments"
    large.check_every_retained_checkpoint()
