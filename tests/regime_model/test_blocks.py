"""A block that runs on adds its chains to the block before (regime_model.blocks): per
instrument, the joined run holds the new block's chains, then the earlier ones."""

from __future__ import annotations

import numpy as np

from regime_model.blocks import join_chains, take_instruments
from regime_model.sampler import SampleResult
from regime_model.types import PredictiveBatch


def _run(n: int, chains: int, S: int, D: int, tag: float) -> SampleResult:
    """Every value names its instrument, chain and draw: tag + 100 i + 10 c + s / 100."""
    i, c = np.divmod(np.arange(n * chains), chains)
    lane = tag + 100.0 * i + 10.0 * c
    draws = np.broadcast_to((lane[:, None] + np.arange(S) / 100)[..., None], (n * chains, S, D))
    per_draw = draws[:, :, 0].reshape(-1)
    return SampleResult(
        draws=draws.copy(), divergences=lane.astype(np.int64), acceptance=lane,
        step_size=lane, inv_mass=np.repeat(lane[:, None], D, axis=1), gradient_evals=7,
        timings_ms={}, energy=draws[:, :, 0].copy(), trajectory_length=lane, mean_steps=lane,
        predictive=PredictiveBatch(np.stack([per_draw, per_draw], 1), per_draw, per_draw),
    )  # fmt: skip


def test_joined_chains_stay_with_their_instrument_new_block_first() -> None:
    new, old = _run(2, 3, 4, 2, 0.5), _run(2, 2, 4, 2, 0.25)
    joined = join_chains(new, old, 2)
    assert joined.gradient_evals == 14
    first = joined.draws.reshape(2, 5, 4, 2)[:, :, 0, 0]
    np.testing.assert_array_equal(first, [[0.5, 10.5, 20.5, 0.25, 10.25],
                                          [100.5, 110.5, 120.5, 100.25, 110.25]])  # fmt: skip
    assert joined.predictive is not None
    np.testing.assert_array_equal(joined.predictive.mean, joined.draws[:, :, 0].reshape(-1))
    np.testing.assert_array_equal(joined.step_size, joined.draws[:, 0, 0])


def test_taking_instruments_keeps_each_one_s_chains_and_draws_whole() -> None:
    run = _run(3, 2, 4, 2, 0.0)
    taken = take_instruments(run, np.array([0, 2]), 3)
    np.testing.assert_array_equal(taken.draws[:, 0, 0], [0, 10, 200, 210])
    assert taken.predictive is not None
    np.testing.assert_array_equal(taken.predictive.var, taken.draws[:, :, 0].reshape(-1))
    np.testing.assert_array_equal(taken.energy, taken.draws[:, :, 0])
