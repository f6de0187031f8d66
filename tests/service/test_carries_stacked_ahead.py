"""Carries stacked ahead of their checkpoint (carry_stacks.StackedAhead): the checkpoint
is the same bytes as one that stacks them itself, takes the stacks only while they are
its carries, and in a worker sampling between bars stacks nothing on the bar's path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_checkpoint_codec import carry
from test_trader import Rig, make_config

from regime_model.update import InstrumentCarry
from service.model_state import InstrumentState, ModelState
from service.state import carry_stacks, codec
from service.state.carry_stacks import StackedAhead
from service.state.checkpoint_codec import (
    book_carries,
    checkpoint_state,
    decode_model_state,
    encode_model_state,
)


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


def test_stacked_ahead_the_checkpoint_is_the_same_bytes_and_stacks_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = state_of({"SPY": float32_carry(1, 4), "QQQ": float32_carry(2, 32),
                      "IWM": None, "GLD": float32_carry(3, 32)})  # fmt: skip
    itself = encode_model_state(state)
    ahead = StackedAhead()
    ahead.prepare(book_carries(state))

    def refused(*_: object) -> None:
        raise AssertionError("stacked at the checkpoint")

    narrowed = codec._narrowed

    def narrowed_but_carries(array: np.ndarray) -> np.ndarray:
        assert array.dtype != np.float64, "a carry's stored form worked out at the checkpoint"
        return narrowed(array)  # the window sums' (uint64): what the update brings

    monkeypatch.setattr(carry_stacks, "stack", refused)
    monkeypatch.setattr(codec, "_narrowed", narrowed_but_carries)
    assert encode_model_state(state, ahead) == itself


@pytest.mark.parametrize("change", ["carry set since", "instrument added", "instrument gone"])
def test_stacks_that_are_no_longer_the_carries_are_not_taken(change: str) -> None:
    carries: dict[str, InstrumentCarry | None] = {"SPY": float32_carry(1, 4),
                                                  "QQQ": float32_carry(2, 32)}  # fmt: skip
    state = state_of(carries)
    ahead = StackedAhead()
    ahead.prepare(book_carries(state))
    if change == "carry set since":
        state.instruments["QQQ"].carry = float32_carry(9, 32)
    elif change == "instrument added":
        state.instruments["AAA"] = InstrumentState("AAA", returns=np.array([0.0]),
                                                   carry=float32_carry(5, 4))  # fmt: skip
    else:
        del state.instruments["SPY"]
    blob, book, _ = encode_model_state(state, ahead)
    assert (blob, book) == encode_model_state(state)[:2]
    back = decode_model_state(blob, book, stored(state))
    assert all(same(back.instruments[s].carry, i.carry) for s, i in state.instruments.items())


def test_a_worker_sampling_between_bars_stacks_its_carries_off_the_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sampler after update 1 sets the carries and they are stacked there; update 2's
    checkpoint stacks none, and writes the carries the sampler left."""
    rig = Rig(make_config(tmp_path), tmp_path / "state")
    assert rig.trader.between is not None  # the default: sample between bars
    rig.trader.resume()
    stacks: list[str] = []
    stack = carry_stacks.stack

    def counted(carries: list[InstrumentCarry | None]) -> dict[str, np.ndarray]:
        stacks.append("stacked")
        return stack(carries)

    monkeypatch.setattr(carry_stacks, "stack", counted)
    rig.update(0)  # the update, then the sampler between bars
    assert stacks  # by the sampler's step, at least
    left = {s: i.carry for s, i in rig.trader.model_state.instruments.items()}
    stacks.clear()
    rig.trader.update(rig.bar(1))  # the bar's update alone: its checkpoint
    assert stacks == []
    latest = rig.store.latest()
    assert latest is not None and latest.seq == 2
    written = checkpoint_state(rig.store, latest)
    rig.close()
    assert all(same(written.instruments[s].carry, want) for s, want in left.items())
