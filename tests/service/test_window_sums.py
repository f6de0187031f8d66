"""What a checkpoint keeps of each return window (service/state/window_sums.py): a 64-bit
weighted sum that one wrong value always changes, and a wrong or shifted window but for a
2^-64 chance; a checkpoint that kept CRC-32s instead still decodes, checked by them."""

from __future__ import annotations

import math
import struct
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.model_state import InstrumentState, ModelState
from service.state.carry_stacks import CARRY_ROWS
from service.state.checkpoint_codec import WINDOW_CRC, decode_model_state, encode_model_state
from service.state.codec import decode_arrays, encode_arrays
from service.state.errors import UnusableStateError
from service.state.window_sums import window_sum, window_sums

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
