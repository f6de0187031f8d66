"""Carries encoded and written ahead of their checkpoint (carry_stacks.CarriesAhead): the
checkpoint is the same bytes as one that encodes them itself, takes the encoding only
while it is of its carries, writes no carries row where one was staged for it, and in a
worker sampling between bars does neither on the bar's path."""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from test_checkpoint_codec import carry
from test_trader import Rig, make_config

from regime_model.update import InstrumentCarry
from service.model_state import InstrumentState, ModelState
from service.state import carry_stacks
from service.state.carry_stacks import CarriesAhead, CarryBlob
from service.state.checkpoint_codec import (
    book_carries,
    checkpoint_state,
    decode_model_state,
    encode_model_state,
)
from service.state.errors import UnusableStateError
from service.state.store import Checkpoint, StateStore


def float32_carry(seed: int, chains: int) -> InstrumentCarry:
    """A carry as the wgpu sampler leaves it: positions and step sizes float32 values."""
    c = carry(seed, chains)
    narrow = [a.astype(np.float32).astype(np.float64) for a in (c.position, c.step_size)]
    return InstrumentCarry(*narrow, c.inv_mass)


def state_of(carries: dict[str, InstrumentCarry | None]) -> ModelState:
    return ModelState({s: InstrumentState(s, returns=np.array([0.01 * i, -0.02]), carry=c)
                       for i, (s, c) in enumerate(carries.items())})  # fmt: skip


def stored(state: ModelState) -> dict[str, list[float]]:
    return {s: i.returns.tolist() for s, i in state.instruments.items()}


def same(got: InstrumentCarry | None, want: InstrumentCarry | None) -> bool:
    return got is not None and want is not None and all(
        np.array_equal(a, b) for a, b in zip(got, want, strict=True))


class Staged:
    """A stand-in for StateStore.stage_carries: records what it was given, and says
    whether the row was written."""

    def __init__(self, writes: bool = True) -> None:
        self.writes, self.rows = writes, list[tuple[int, bytes]]()

    def __call__(self, seq: int, arrays: bytes) -> bool:
        self.rows.append((seq, arrays))
        return self.writes


def test_encoded_ahead_the_checkpoint_is_the_same_bytes_and_encodes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = state_of({"SPY": float32_carry(1, 4), "QQQ": float32_carry(2, 32),
                      "IWM": None, "GLD": float32_carry(3, 32)})  # fmt: skip
    itself = encode_model_state(state)
    ahead, stage = CarriesAhead(), Staged()
    ahead.prepare(book_carries(state), 7, stage)
    assert stage.rows == [(7, itself.carries.arrays)]  # the row the checkpoint would write

    def refused(*_: object) -> CarryBlob:
        raise AssertionError("encoded at the checkpoint")

    monkeypatch.setattr(carry_stacks, "encode", refused)
    encoded = encode_model_state(state, ahead)
    assert encoded == itself
    assert ahead.to_write(encoded.carries, 7) is None  # staged for this very checkpoint
    assert ahead.to_write(encoded.carries, 8) == itself.carries.arrays  # not for another


def test_a_staging_that_failed_leaves_the_row_to_the_checkpoint() -> None:
    state = state_of({"SPY": float32_carry(1, 4)})
    ahead = CarriesAhead()
    ahead.prepare(book_carries(state), 3, Staged(writes=False))  # disk full, say
    encoded = encode_model_state(state, ahead)
    assert ahead.to_write(encoded.carries, 3) == encoded.carries.arrays


@pytest.mark.parametrize("change", ["carry set since", "instrument added", "instrument gone"])
def test_an_encoding_no_longer_of_the_carries_is_not_taken(change: str) -> None:
    carries: dict[str, InstrumentCarry | None] = {"SPY": float32_carry(1, 4),
                                                  "QQQ": float32_carry(2, 32)}  # fmt: skip
    state = state_of(carries)
    ahead = CarriesAhead()
    ahead.prepare(book_carries(state), 5, Staged())
    if change == "carry set since":
        state.instruments["QQQ"].carry = float32_carry(9, 32)
    elif change == "instrument added":
        state.instruments["AAA"] = InstrumentState("AAA", returns=np.array([0.0]),
                                                   carry=float32_carry(5, 4))  # fmt: skip
    else:
        del state.instruments["SPY"]
    encoded = encode_model_state(state, ahead)
    assert encoded == encode_model_state(state)
    row = ahead.to_write(encoded.carries, 5)  # the staged row is not these carries
    assert row == encoded.carries.arrays
    back = decode_model_state(encoded.model, encoded.book, stored(state), row)
    assert all(same(back.instruments[s].carry, i.carry) for s, i in state.instruments.items())


def test_a_staged_row_is_the_checkpoints_carries_and_pruned_with_it(tmp_path: Path) -> None:
    """Staged before its checkpoint, the row is read back with it; one staged again is
    replaced; the rows go with their checkpoints past the retention."""
    store = StateStore(tmp_path / "a.sqlite", retention=2)
    spy = InstrumentState("SPY", returns=np.array([0.01, -0.02]), unsaved=2)
    state = ModelState({"SPY": spy})
    for seq in (1, 2, 3):
        spy.carry = float32_carry(seq, 4)
        encoded = encode_model_state(state)
        assert store.stage_carries(seq, b"an earlier sampling's")
        assert store.stage_carries(seq, encoded.carries.arrays)  # sampled again: replaced
        bar = datetime(2026, 1, 5, 10, seq, tzinfo=UTC)
        store.commit_update(Checkpoint(seq, bar, "h", "wgpu", "gpu", "float32", 1.0, 1.0,
                                       encoded.model, encoded.book), [], [],
                            windows=encoded.windows)  # no row: staged  # fmt: skip
        state.saved()
        latest = store.latest()
        assert latest is not None
        assert same(checkpoint_state(store, latest).instruments["SPY"].carry, spy.carry)
    assert store.checkpoint_seqs() == [2, 3]
    assert store.carries(1) is None and store.carries(2) is not None
    store.close()


def test_a_worker_sampling_between_bars_writes_its_carries_off_the_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sampler after update 1 sets the carries, and they are encoded and staged as
    checkpoint 2's row there; update 2's checkpoint encodes none, writes no carries row,
    and holds the carries the sampler left."""
    rig = Rig(make_config(tmp_path), tmp_path / "state")
    assert rig.trader.between is not None  # the default: sample between bars
    rig.trader.resume()
    encodings: list[str] = []
    encode = carry_stacks.encode

    def counted(carries: list[InstrumentCarry | None]) -> CarryBlob:
        encodings.append("encoded")
        return encode(carries)

    rows: list[bytes | None] = []
    commit = rig.store.commit_update

    def committed(*args: object, carries: bytes | None = None, **kwargs: object) -> None:
        rows.append(carries)
        commit(*args, carries=carries, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(carry_stacks, "encode", counted)
    monkeypatch.setattr(rig.store, "commit_update", committed)
    rig.update(0)  # the update, then the sampler between bars
    assert encodings and rig.store.carries(2) is not None  # staged by the sampler's step
    left = {s: i.carry for s, i in rig.trader.model_state.instruments.items()}
    encodings.clear()
    rig.trader.update(rig.bar(1))  # the bar's update alone: its checkpoint
    assert encodings == [] and rows[-1] is None
    latest = rig.store.latest()
    assert latest is not None and latest.seq == 2
    written = checkpoint_state(rig.store, latest)
    rig.close()
    assert all(same(written.instruments[s].carry, want) for s, want in left.items())


def test_a_checkpoint_whose_carries_row_is_gone_is_refused_saying_where(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite"
    store = StateStore(path)
    state = ModelState({"SPY": InstrumentState("SPY", returns=np.array([0.01]), unsaved=1,
                                               carry=float32_carry(1, 4))})  # fmt: skip
    encoded = encode_model_state(state)
    store.commit_update(Checkpoint(1, datetime(2026, 1, 5, 10, tzinfo=UTC), "h", "wgpu", "gpu",
                                   "float32", 1.0, 1.0, encoded.model, encoded.book), [], [],
                        windows=encoded.windows, carries=encoded.carries.arrays)  # fmt: skip
    conn = sqlite3.connect(path)  # the row lost (a damaged or hand-edited database)
    conn.execute("DELETE FROM carries")
    conn.commit()
    conn.close()
    latest = store.latest()
    assert latest is not None
    with pytest.raises(UnusableStateError, match=rf"{re.escape(str(path))}: checkpoint 1: "
                                                 "its carries row .* is missing; restore"):
        checkpoint_state(store, latest)
    store.close()


def test_a_staging_the_database_refuses_leaves_every_later_commit_synced(
    tmp_path: Path,
) -> None:
    """A staging that cannot begin (the database locked by another writer, say) is
    refused: the checkpoint writes the row. Its transaction is the unsynced kind, so the
    connection must be back to synchronous=FULL after it, or every later checkpoint would
    commit without a sync."""
    path = tmp_path / "a.sqlite"
    store = StateStore(path)
    store._conn.execute("PRAGMA busy_timeout = 0")  # refused at once, not after 5 s
    other = sqlite3.connect(path)
    other.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
    try:
        assert store.stage_carries(1, b"a carries row") is False
    finally:
        other.rollback()
        other.close()
    assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert store.carries(1) is None
    store.close()
