"""What a checkpoint keeps of each return window (service/state/window_sums.py): a 64-bit
weighted sum that one wrong value always changes, and a wrong or shifted window but for a
2^-64 chance, slid on from the last window's where the window is one return on; a
checkpoint that kept CRC-32s instead still decodes, checked by them."""

from __future__ import annotations

import math
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_checkpoint_codec import warm_state

from service.model_state import InstrumentState, ModelState
from service.state import window_sums as window_sums_module
from service.state.carry_stacks import CARRY_ROWS
from service.state.checkpoint_codec import WINDOW_CRC, decode_model_state, encode_model_state
from service.state.codec import decode_arrays, encode_arrays
from service.state.errors import UnusableStateError
from service.state.window_sums import SlidingSums, table_sums, window_sum, window_sums

GOLDEN = 0x9E3779B97F4A7C15
floats = st.floats(allow_nan=False, width=64)


def by_definition(values: list[float]) -> int:
    """sum_i (2i + 1) * GOLDEN * bits(x_i) mod 2^64, in Python's exact integers."""
    bits = [struct.unpack("<Q", struct.pack("<d", x))[0] for x in values]
    return sum((2 * i + 1) * GOLDEN * b for i, b in enumerate(bits)) % 2**64


@given(st.lists(floats, max_size=40))
def test_the_sum_is_its_definition_row_by_row_and_at_once(values: list[float]) -> None:
    window = np.array(values, dtype=np.float64)
    assert window_sum(window) == by_definition(values)
    rows = np.stack([window, window[::-1]]) if values else np.zeros((2, 0))
    assert window_sums(rows).tolist() == [by_definition(values), by_definition(values[::-1])]


@given(st.lists(floats, min_size=1, max_size=40), st.data())
def test_one_wrong_value_always_changes_the_sum(values: list[float], data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(values) - 1))
    was = struct.pack("<d", values[at])
    wrong = data.draw(floats.filter(lambda x: struct.pack("<d", x) != was))
    changed = [*values[:at], wrong, *values[at + 1:]]
    assert window_sum(np.array(changed)) != window_sum(np.array(values))


def test_a_shifted_window_is_refused_at_decode() -> None:
    """A window rebuilt one return on (the returns table read from the wrong start)."""
    returns = np.random.default_rng(3).normal(0, 0.01, 9)
    state = ModelState({"SPY": InstrumentState("SPY", returns=returns[:8])})
    blob, book, _, carries = encode_model_state(state)
    assert decode_model_state(blob, book, {"SPY": returns[:8].tolist()}, carries.arrays)
    with pytest.raises(UnusableStateError, match="SPY: its return window"):
        decode_model_state(blob, book, {"SPY": returns[1:].tolist()}, carries.arrays)


def test_a_checkpoint_that_kept_crc32s_still_decodes_checked_by_them() -> None:
    """Up to the thirty-seventh session the blob kept each window's CRC-32."""
    returns = np.array([0.01, -0.02, math.pi / 100])
    state = ModelState({"SPY": InstrumentState("SPY", returns=returns)})
    _, book, _, carries = encode_model_state(state)
    arrays = {k: v for k, v in decode_arrays(carries.arrays).items() if k == CARRY_ROWS}
    arrays[WINDOW_CRC] = np.array([zlib.crc32(returns.astype("<f8").tobytes())], np.uint32)
    older = encode_arrays(arrays)
    back = decode_model_state(older, book, {"SPY": returns.tolist()})
    assert np.array_equal(back.instruments["SPY"].returns, returns)
    with pytest.raises(UnusableStateError, match="SPY: its return window"):
        decode_model_state(older, book, {"SPY": [0.01, -0.02, 0.0]})


bit_patterns = st.integers(0, 2**64 - 1)  # any float64, NaN payloads and -0.0 among them


@given(st.lists(bit_patterns, min_size=3, max_size=60), st.integers(1, 20))
def test_a_window_slid_on_has_the_sum_of_the_new_window_to_the_bit(
    bits: list[int], length: int
) -> None:
    """SlidingSums carries each row's sum from one window to the next, one return on: at
    every step the sum window_sums gives the new window, whatever the bit patterns."""
    length = min(length, len(bits) - 1)
    rows = np.array([bits, bits[::-1]], dtype=np.uint64).view(np.float64)
    sums = SlidingSums(rows[:, :length], 0)
    for start in range(1, len(bits) - length + 1):
        sums.slide(rows)
        assert sums.start == start
        assert sums.sums.tolist() == window_sums(rows[:, start:start + length]).tolist()


def test_a_checkpoint_slides_the_tables_sums_on_and_sums_whole_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sums a table's last checkpoint kept are slid on where its windows are one
    return on since; summed whole for a new table, or windows two returns on."""
    state = warm_state(["SPY", "QQQ", "GLD"], window=16, updates=2)
    table = state.returns_table
    assert table is not None
    whole: list[int] = []
    summed = window_sums_module.window_sums

    def counted(windows: np.ndarray) -> np.ndarray:
        whole.append(windows.shape[0])
        return summed(windows)

    monkeypatch.setattr(window_sums_module, "window_sums", counted)

    def one_return_on() -> None:
        assert table.slid(list(table.windows), np.full(3, 0.001 * table.start))

    assert table_sums(table).tolist() == summed(table.view).tolist() and whole == [3]
    one_return_on()
    assert table_sums(table).tolist() == summed(table.view).tolist() and whole == [3]
    one_return_on()
    one_return_on()  # two on since the last checkpoint's: summed whole
    assert table_sums(table).tolist() == summed(table.view).tolist() and whole == [3, 3]
