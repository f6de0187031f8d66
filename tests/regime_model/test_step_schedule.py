"""The vectorised step schedule: all iterations at once are each iteration drawn alone."""

from __future__ import annotations

import numpy as np

from regime_model import rng
from regime_model.sampler import SamplerConfig, step_counts


def test_step_counts_of_many_iterations_are_those_of_each_alone() -> None:
    zero = np.zeros(1, dtype=np.uint32)
    schedule = rng.make_stream(20261201, zero, zero, 7)
    config = SamplerConfig(draws=40, chains=4, steps_min=3, steps_max=6)
    iterations = np.arange(-15, 40)
    expected = [step_counts(schedule, np.array([i]), config)[0] for i in iterations]
    np.testing.assert_array_equal(step_counts(schedule, iterations, config), expected)
    assert set(expected) == {3, 4, 5, 6}
