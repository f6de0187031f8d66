"""A worker's model state through its checkpoint form and back, as resume reads it."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from regime_model.update import InstrumentCarry
from service.market.bar_batch import batch_of
from service.model_state import InstrumentState, ModelState, append_batch
from service.state.carry_stacks import CARRY_ROWS, CarryBlob
from service.state.checkpoint_codec import (
    CARRIES_SHA,
    WINDOW_SHA,
    WINDOW_SUM,
    decode_model_state,
    encode_model_state,
)
from service.state.codec import decode_arrays, encode_arrays
from service.state.errors import UnusableStateError
from service.strategy import Decision
from service.types import Bar


def carry(seed: int, chains: int = 4, dim: int = 6) -> InstrumentCarry:
    gen = np.random.default_rng(seed)
    return InstrumentCarry(gen.normal(size=(chains, dim)), gen.uniform(0.1, 0.5, chains),
                           gen.uniform(0.5, 2.0, dim))  # fmt: skip


def test_carries_of_every_shape_and_none_come_back_exactly() -> None:
    """Carries of the common shape travel stacked; one of another shape (the model's
    states changed under it) and an instrument without one come back as they were."""
    state = ModelState({
        "SPY": InstrumentState("SPY", returns=np.array([0.01, -0.02]), carry=carry(1)),
        "QQQ": InstrumentState("QQQ", returns=np.array([0.03]), carry=carry(2)),
        "GLD": InstrumentState("GLD", returns=np.array([0.0, 0.1]), carry=carry(3, dim=12)),
        "IWM": InstrumentState("IWM"),
    }, rotation_start=2)  # fmt: skip
    blob, book, windows, carries = encode_model_state(state)
    assert windows.counts == [0, 0, 0, 0] and windows.fresh == b""  # nothing appended: all saved
    stored = {s: i.returns.tolist() for s, i in state.instruments.items()}  # what the table holds
    back = decode_model_state(blob, book, stored, carries.arrays)
    assert back.rotation_start == 2 and set(back.instruments) == set(state.instruments)
    for symbol, instrument in state.instruments.items():
        got = back.instruments[symbol]
        assert np.array_equal(got.returns, instrument.returns)
        if instrument.carry is None:
            assert got.carry is None
        else:
            assert got.carry is not None
            for a, b in zip(got.carry, instrument.carry, strict=True):
                assert np.array_equal(a, b) and a.dtype == np.float64
    assert sorted(decode_arrays(blob)) == [CARRIES_SHA, WINDOW_SUM]  # the carries: a row
    assert b"/carry" not in carries.arrays and b"carry#1/position" in carries.arrays  # GLD's


def test_carries_of_two_shapes_travel_as_two_stacks() -> None:
    """An instrument run on between bars starts its next update with a block's chains:
    on the trial shape half the carries have 32 chains and half 4. Each shape is one
    stack in the blob (a few arrays, not three per instrument), every carry exact."""
    symbols = [f"S{i:02d}" for i in range(12)]
    state = ModelState({s: InstrumentState(s, returns=np.array([0.01]),
                                           carry=carry(i, chains=32 if i % 3 else 4))
                        for i, s in enumerate(symbols)})  # fmt: skip
    blob, book, _, carries = encode_model_state(state)
    arrays = decode_arrays(carries.arrays)
    assert sorted(arrays) == sorted([CARRY_ROWS, "carry/position", "carry/step_size",
                                     "carry/inv_mass", "carry_rows#1", "carry#1/position",
                                     "carry#1/step_size", "carry#1/inv_mass"])
    assert arrays["carry/position"].shape == (8, 32, 6)  # the larger group unsuffixed
    back = decode_model_state(blob, book, {s: [0.01] for s in symbols}, carries.arrays)
    for symbol, instrument in state.instruments.items():
        assert instrument.carry is not None
        got = back.instruments[symbol].carry
        assert got is not None and all(np.array_equal(a, b) for a, b in
                                       zip(got, instrument.carry, strict=True))  # fmt: skip


def in_the_blob(blob: bytes, carries: CarryBlob) -> dict[str, np.ndarray]:
    """A checkpoint's arrays as a blob of schema version 8 or before held them: the
    carries in the blob itself, with the window sums (no carries row, no digest of one)."""
    return {**decode_arrays(carries.arrays), WINDOW_SUM: decode_arrays(blob)[WINDOW_SUM]}


def test_a_checkpoint_with_its_carries_in_its_blob_still_decodes() -> None:
    """Up to schema version 8 the blob held the carries: such a checkpoint resumes with
    them, and needs no carries row."""
    state = ModelState({"SPY": InstrumentState("SPY", returns=np.array([0.01]), carry=carry(1)),
                        "GLD": InstrumentState("GLD", returns=np.array([0.02]), carry=carry(2))})
    blob, book, _, carries = encode_model_state(state)
    back = decode_model_state(encode_arrays(in_the_blob(blob, carries)), book,
                              {"SPY": [0.01], "GLD": [0.02]})  # fmt: skip
    for symbol, instrument in state.instruments.items():
        got, want = back.instruments[symbol].carry, instrument.carry
        assert got is not None and want is not None
        assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))


@pytest.mark.parametrize("row", ["missing", "another checkpoint's"])
def test_a_carries_row_that_is_not_the_checkpoints_is_refused(row: str) -> None:
    """The blob keeps the SHA-256 of its carries row: a row lost, or one of other carries
    (another checkpoint's), is found at decode, not resumed from."""
    state = ModelState({"SPY": InstrumentState("SPY", returns=np.array([0.01]), carry=carry(1))})
    blob, book, _, _ = encode_model_state(state)
    other = encode_model_state(ModelState({"SPY": InstrumentState(
        "SPY", returns=np.array([0.01]), carry=carry(2))})).carries.arrays
    with pytest.raises(UnusableStateError, match="carries row"):
        decode_model_state(blob, book, {"SPY": [0.01]}, None if row == "missing" else other)


def test_a_carry_under_its_own_symbols_keys_still_decodes() -> None:
    """Before the stacks by shape, a carry of another shape than the commonest was kept
    under "<symbol>/carry/<field>": such a checkpoint still resumes with it."""
    state = ModelState({"SPY": InstrumentState("SPY", returns=np.array([0.01]), carry=carry(1)),
                        "GLD": InstrumentState("GLD", returns=np.array([0.02]))})  # fmt: skip
    blob, book, _, carries = encode_model_state(state)
    arrays = in_the_blob(blob, carries)
    gld = carry(3, chains=32)
    arrays.update({f"GLD/carry/{n}": v for n, v in gld._asdict().items()})
    back = decode_model_state(encode_arrays(arrays), book, {"SPY": [0.01], "GLD": [0.02]})
    got = back.instruments["GLD"].carry
    assert got is not None and np.array_equal(got.position, gld.position)
    assert back.instruments["SPY"].carry is not None


def test_every_instrument_field_comes_back_whatever_is_missing() -> None:
    """The book's columns carry a close, regime and decision that may be absent, a
    retiring flag and the last bar's time: each comes back as it was, absent as absent."""
    bar = datetime(2026, 1, 5, 14, 30, tzinfo=ZoneInfo("America/New_York"))
    state = ModelState({
        "SPY": InstrumentState("SPY", returns=np.array([0.01]), last_bar_time=bar,
                               last_close=401.25, regime=1,
                               decision=Decision("SPY", True, 0.25, 12.0)),
        "QQQ": InstrumentState("QQQ", returns=np.array([0.02]), last_bar_time=bar,
                               last_close=350.5, regime=0, retiring=True,
                               decision=Decision("QQQ", False, 0.0, 0.0)),
        "NEW": InstrumentState("NEW"),  # no bar, close, regime or decision yet
    })  # fmt: skip
    blob, book, _, carries = encode_model_state(state)
    back = decode_model_state(blob, json.loads(json.dumps(book)),
                              {s: i.returns.tolist() for s, i in state.instruments.items()},
                              carries.arrays)  # fmt: skip
    for symbol, was in state.instruments.items():
        got = back.instruments[symbol]
        assert (got.last_bar_time, got.last_close, got.regime, got.retiring, got.decision) == (
            was.last_bar_time, was.last_close, was.regime, was.retiring, was.decision)


def test_a_window_that_does_not_read_back_as_written_is_refused() -> None:
    state = ModelState({"SPY": InstrumentState("SPY", returns=np.array([0.01, -0.02]))})
    blob, book, _, carries = encode_model_state(state)
    with pytest.raises(UnusableStateError, match="SPY: its return window"):
        decode_model_state(blob, book, {"SPY": [0.01, -0.0200000001]}, carries.arrays)


def test_a_checkpoint_of_schema_version_5_decodes() -> None:
    """Up to version 5 a book held an object per instrument and the blob a SHA-256 of
    each window: such a checkpoint still resumes, its windows checked by that digest."""
    returns = np.array([0.01, -0.02])
    blob = encode_arrays({CARRY_ROWS: np.zeros(0, np.int64), WINDOW_SHA: np.frombuffer(
        hashlib.sha256(returns.astype("<f8").tobytes()).digest(), np.uint8).reshape(1, 32)})
    book = {"cursor": 0, "instruments": {"SPY": {
        "last_bar_time": None, "last_close": 99.5, "regime": 0, "retiring": False,
        "decision": {"invested": True, "target_weight": 0.5, "target_qty": 3.0}}}}
    back = decode_model_state(blob, book, {"SPY": returns.tolist()})
    spy = back.instruments["SPY"]
    assert np.array_equal(spy.returns, returns) and spy.last_close == 99.5
    assert spy.decision == Decision("SPY", True, 0.5, 3.0)
    with pytest.raises(UnusableStateError, match="SPY: its return window"):
        decode_model_state(blob, book, {"SPY": [0.01, -0.03]})


def warm_state(symbols: list[str], window: int, updates: int) -> ModelState:
    """Instruments with full windows and carries after `updates` warm updates of one bar
    each: their windows are rows of the state's returns table (append_batch)."""
    start = datetime(2026, 1, 5, 10, tzinfo=ZoneInfo("America/New_York"))
    gen = np.random.default_rng(7)
    state = ModelState({s: InstrumentState(s, returns=gen.normal(0, 0.01, window),
                                           last_bar_time=start, last_close=100.0 + k,
                                           carry=carry(k), regime=k % 2)
                        for k, s in enumerate(symbols)})  # fmt: skip
    for n in range(1, updates + 1):
        when = start.replace(minute=n)
        bars = {s: [Bar(when, c, c, c, c, 1.0)]
                for s, c in zip(symbols, 100.0 + gen.normal(0, 1, len(symbols)), strict=True)}
        append_batch(state, batch_of(bars), window)
    return state


def test_a_warm_update_is_encoded_from_the_returns_table_as_window_by_window() -> None:
    """After a warm update every window is a row of one table, read at once: the blob,
    the book and the windows to store are those the instruments give one by one."""
    state = warm_state(["SPY", "QQQ", "GLD", "IWM"], window=16, updates=3)
    state.saved()
    for n in range(4, 6):  # one bar since the last checkpoint, in a table sorted otherwise
        bars = {s: [Bar(datetime(2026, 1, 5, 10, n, tzinfo=ZoneInfo("America/New_York")),
                        99.0 + k, 99.0, 99.0, 99.0 + k, 1.0)]
                for k, s in enumerate(["SPY", "QQQ", "GLD", "IWM"])}  # fmt: skip
        append_batch(state, batch_of(bars), 16)
        table = state.returns_table
        assert table is not None
        assert table.rows_of([state.instruments[s] for s in sorted(state.instruments)]) is not None
        from_table = encode_model_state(state)
        state.returns_table = None  # each window on its own
        one_by_one = encode_model_state(state)
        state.returns_table = table
        assert from_table == one_by_one
        assert from_table[2].counts == [1, 1, 1, 1] and len(from_table[2].fresh) == 4 * 8
        state.saved()


def test_a_window_not_of_the_table_is_encoded_on_its_own() -> None:
    """An instrument whose window is not its row of the table (replaced, or not taken in
    the last update) is not read from the table: its own window is checksummed."""
    state = warm_state(["SPY", "QQQ"], window=8, updates=2)
    state.instruments["QQQ"].returns = state.instruments["QQQ"].returns + 0.5
    instruments = [state.instruments[s] for s in sorted(state.instruments)]
    assert state.returns_table is not None and state.returns_table.rows_of(instruments) is None
    blob, book, windows, carries = encode_model_state(state)
    # the returns not saved yet (two updates' worth), each instrument's own
    assert windows.symbols == ["QQQ", "SPY"] and windows.counts == [2, 2]
    assert windows.fresh == np.concatenate(
        [state.instruments[s].returns[-2:] for s in ("QQQ", "SPY")]).astype("<f8").tobytes()
    stored = {s: i.returns.tolist() for s, i in state.instruments.items()}
    back = decode_model_state(blob, book, stored, carries.arrays)  # each window: its sum
    assert np.array_equal(back.instruments["QQQ"].returns, state.instruments["QQQ"].returns)
