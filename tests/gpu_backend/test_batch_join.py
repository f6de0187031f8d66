"""An update's narrow and wide instruments in one device run (regime_model.batch_join):
the joined run's lanes are the separate runs' lanes bit for bit, in one submission."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from wgpu_fixtures import fixture_gpu_device, lane_backend  # noqa: F401 - fixture

from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.wgpu_device import Device
from regime_model.batch_join import join, run_together
from regime_model.update import InstrumentCarry, ModelSpec, build_batch, refresh
from regime_model.width import wide_spec

SPEC = ModelSpec(window=32, warmup_cold=60, warmup_warm=3, draws=6, extension_chains=8,
                 extension_warmup=3)  # fmt: skip
N = 3


def _batches() -> tuple[list, np.ndarray]:  # type: ignore[type-arg]
    """Instruments 0 and 1 narrow (4 chains), 2 wide (8: its chains doubled)."""
    returns = 0.01 * regime_returns(N, SPEC.window + 1, np.random.default_rng(4))
    keys = np.arange(N)
    _, carries, _ = refresh(returns[:, :-1], [None] * N, keys, 1, 5, replace(SPEC, extend_max=0),
                            NumpyBackend())  # fmt: skip
    c = carries[2]
    wide = InstrumentCarry(np.repeat(c.position, 2, axis=0), np.repeat(c.step_size, 2), c.inv_mass)
    window = returns[:, 1:]
    narrow_rows, wide_rows = np.array([0, 1]), np.array([2])
    main = build_batch(window, carries[:2], keys[narrow_rows], 2, 5, SPEC, 0, narrow_rows)[0]
    other = build_batch(window, [wide], keys[wide_rows], 2, 5, wide_spec(SPEC), 0, wide_rows)[0]
    return [main, other], window


def test_a_joined_run_is_the_separate_runs_in_one_submission(gpu_device: Device) -> None:
    backend = lane_backend(gpu_device, 8)
    sampler = backend.lane_sampler
    assert sampler is not None
    batches, _ = _batches()
    assert join(batches) is not None
    before = sampler.submissions
    together = run_together(backend, batches)
    assert sampler.submissions == before + 1
    # the one run's calls and time are reported once, with its first part
    assert together[0].gradient_evals > 0 and together[1].gradient_evals == 0
    assert together[0].timings_ms and not together[1].timings_ms
    for batch, part in zip(batches, together, strict=True):
        alone = backend.run_update(batch)
        np.testing.assert_array_equal(part.draws, alone.draws)
        np.testing.assert_array_equal(part.step_size, alone.step_size)
        assert part.predictive is not None and alone.predictive is not None
        np.testing.assert_array_equal(part.predictive.filtered_last, alone.predictive.filtered_last)


def test_batches_that_differ_in_more_than_lanes_do_not_join_and_numpy_runs_them_apart() -> None:
    batches, _ = _batches()
    other_draws = [batches[0]._replace(config=batches[0].config._replace(draws=7)), batches[1]]
    assert join(other_draws) is None
    cold = batches[0]._replace(start=batches[0].start._replace(
        adapt_mass=np.ones_like(batches[0].start.adapt_mass)))  # fmt: skip
    assert join([cold, batches[1]]) is None  # the host pools a cold lane's metric by chains
    ran = run_together(NumpyBackend(), batches)  # numpy: one after another, as alone
    for batch, part in zip(batches, ran, strict=True):
        np.testing.assert_array_equal(part.draws, NumpyBackend().run_update(batch).draws)
