"""Which leapfrog steps a batch takes: a warm update's, or a cold warm-up's."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from regime_model.update import InstrumentCarry, ModelSpec, build_batch

SPEC = ModelSpec(window=32)
RETURNS = 0.01 * np.random.default_rng(3).standard_normal((3, SPEC.window))
KEYS = np.arange(3)


def _carry() -> InstrumentCarry:
    return InstrumentCarry(np.zeros((SPEC.chains, 6)), np.full(SPEC.chains, 0.2), np.ones(6))


def _steps(carries: list[InstrumentCarry | None], extension: int = 0) -> tuple[int, int]:
    batch, _ = build_batch(RETURNS, carries, KEYS, 2, 7, SPEC, extension)
    return batch.config.steps_min, batch.config.steps_max


def test_a_warm_update_takes_the_longer_trajectories() -> None:
    assert (SPEC.steps_min, SPEC.steps_max) == (4, 8)
    assert _steps([_carry()] * 3) == (4, 8)
    assert _steps([_carry()] * 3, extension=1) == (4, 8)  # a run-on block starts warm too


def test_only_a_batch_of_instruments_that_all_start_cold_takes_the_cold_steps() -> None:
    assert (SPEC.cold_steps_min, SPEC.cold_steps_max) == (3, 6)
    assert _steps([None] * 3) == (3, 6)
    assert _steps([None, _carry(), None]) == (4, 8)  # cold and warm together: the warm ones


def test_a_cold_range_must_be_a_range() -> None:
    with pytest.raises(ValueError, match=r"cold_steps_max >= cold_steps_min, got 5\.\.4"):
        replace(SPEC, cold_steps_min=5, cold_steps_max=4)
    with pytest.raises(ValueError, match="cold_steps_min must be >= 1"):
        replace(SPEC, cold_steps_min=0)
