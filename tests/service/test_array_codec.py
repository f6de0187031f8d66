"""The model-state blob's array encoding (service/state/codec.py): what goes in comes
back to the bit, a float64 array of float32 values (the wgpu sampler's carries) in half
the bytes, and a blob with nothing narrowed is the encoding every earlier checkpoint has."""

from __future__ import annotations

import json
import struct
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from regime_model.update import InstrumentCarry
from service.model_state import InstrumentState, ModelState
from service.state.checkpoint_codec import checkpoint_state, decode_model_state, encode_model_state
from service.state.codec import MAGIC, NARROWED_MAGIC, CodecError, decode_arrays, encode_arrays
from service.state.errors import UnusableStateError
from service.state.records import Checkpoint
from service.state.store import StateStore

float32_values = st.lists(st.floats(width=32, allow_nan=False), min_size=1, max_size=64)
any_bits = st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=64)


def bits(array: np.ndarray) -> list[int]:
    return np.asarray(array, dtype="<f8").view("<u8").tolist()


def payload(blob: bytes) -> int:
    """The bytes of a blob's arrays, less its magic, header length and header."""
    (head,) = struct.unpack("<I", blob[4:8])
    return len(blob) - 8 - head


@given(float32_values)
def test_float32_values_in_a_float64_array_take_four_bytes_each_and_come_back_to_the_bit(
    values: list[float],
) -> None:
    wide = np.array(values, dtype=np.float64)
    blob = encode_arrays({"position": wide})
    assert blob[:4] == NARROWED_MAGIC and payload(blob) == 4 * wide.size
    back = decode_arrays(blob)["position"]
    assert back.dtype == np.float64 and bits(back) == bits(wide)


@given(any_bits)
def test_every_float64_bit_pattern_comes_back_as_it_went_in(patterns: list[int]) -> None:
    """NaNs with payloads, -0.0, infinities and subnormals included: an array is narrowed
    only where widening gives back the same bits, never where it gives the same value."""
    wide = np.array(patterns, dtype="<u8").view("<f8")
    back = decode_arrays(encode_arrays({"a": wide, "b": wide[::-1].copy()}))
    assert bits(back["a"]) == patterns and bits(back["b"]) == patterns[::-1]


def test_a_float64_subnormal_or_a_value_float32_rounds_keeps_the_array_whole() -> None:
    for odd in (5e-324, 0.1, 1e300, float(np.nextafter(np.float32(1.0), np.float32(2.0))) + 1e-12):
        wide = np.array([1.0, 2.5, odd])
        blob = encode_arrays({"a": wide})
        assert blob[:4] == MAGIC and bits(decode_arrays(blob)["a"]) == bits(wide)


def test_a_blob_with_nothing_narrowed_is_the_encoding_earlier_checkpoints_have() -> None:
    """Byte for byte the first version's form: its magic, its header, float64 bytes."""
    arrays = {"b": np.array([0.1, -0.2]), "a": np.array([3, 4], dtype=np.int64)}
    header = [{"name": "a", "dtype": "<i8", "shape": [2]},
              {"name": "b", "dtype": "<f8", "shape": [2]}]  # fmt: skip
    head = json.dumps(header, separators=(",", ":")).encode()
    earlier = (MAGIC + struct.pack("<I", len(head)) + head
               + arrays["a"].astype("<i8").tobytes() + arrays["b"].astype("<f8").tobytes())
    assert encode_arrays(arrays) == earlier
    assert bits(decode_arrays(earlier)["b"]) == bits(arrays["b"])


def test_a_narrowed_blob_cut_short_is_refused() -> None:
    blob = encode_arrays({"a": np.arange(8.0)})
    with pytest.raises(CodecError, match="truncated inside array 'a'"):
        decode_arrays(blob[:-4])


def test_float32_carries_make_a_smaller_checkpoint_with_the_same_carries() -> None:
    """The wgpu sampler's chains run in float32: their positions (and most step sizes)
    reach the checkpoint as float64 arrays of float32 values. Stored narrowed, the same
    state's carries row is smaller by four bytes a value and resumes with the same carries."""
    gen = np.random.default_rng(7)

    def state(narrow: bool) -> ModelState:
        def carry(chains: int) -> InstrumentCarry:
            position = gen.normal(size=(chains, 6))
            if narrow:
                position = position.astype(np.float32).astype(np.float64)
            return InstrumentCarry(position, gen.uniform(0.1, 0.5, chains), gen.uniform(0.5, 2, 6))

        return ModelState({f"S{i:02d}": InstrumentState(f"S{i:02d}", returns=np.array([0.01]),
                                                         carry=carry(32 if i % 2 else 4))
                           for i in range(10)})  # fmt: skip

    wide_state, narrow_state = state(False), state(True)
    wide = encode_model_state(wide_state).carries.arrays  # the carries row (schema 9 on)
    blob, book, _, carries = encode_model_state(narrow_state)
    narrow = carries.arrays
    positions = 5 * 32 * 6 + 5 * 4 * 6
    assert payload(wide) - payload(narrow) == 4 * positions
    assert narrow[:4] == NARROWED_MAGIC and wide[:4] == MAGIC
    back = decode_model_state(blob, book, {s: [0.01] for s in narrow_state.instruments}, narrow)
    for symbol, instrument in narrow_state.instruments.items():
        got, want = back.instruments[symbol].carry, instrument.carry
        assert got is not None and want is not None
        for a, b in zip(got, want, strict=True):
            assert a.dtype == np.float64 and bits(a) == bits(b)


def test_a_checkpoint_in_a_form_this_release_does_not_read_parks_the_account(
    tmp_path: Path,
) -> None:
    """A blob that matches its digest but starts with a marker this release does not know
    (a newer release wrote it) is not a crash to restart from: the state is unusable here,
    and the refusal says which checkpoint and what to do."""
    store = StateStore(tmp_path / "alpha.sqlite")
    later = encode_arrays({"a": np.array([0.1])}).replace(MAGIC, b"RTA9", 1)
    store.commit_update(Checkpoint(seq=1, bar_time=datetime(2026, 1, 5, 16, tzinfo=UTC),
                                   config_hash="abc", backend="wgpu", adapter="gpu",
                                   numerics="float32", cash=1.0, equity=1.0, model=later,
                                   book={"cursor": 0}), [], [])  # fmt: skip
    latest = store.latest()
    assert latest is not None
    with pytest.raises(UnusableStateError, match=r"checkpoint 1's model state cannot be read "
                       r"by this release \(model state starts with b'RTA9'.*run the release "
                       r"that wrote it, or restore"):
        checkpoint_state(store, latest)
