"""Several accounts' warm batches in ONE device run (regime_model.batch_join): each account
has its own returns, seed and update number, hence its own step schedule; the joined
batch keeps each once and every lane follows its own account's. The joined run's lanes
are each account's run alone, bit for bit: what a process serving every account of a
host submits at a bar, without changing any account's update."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from wgpu_fixtures import fixture_gpu_device, lane_backend  # noqa: F401 - fixture

from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.wgpu_device import Device
from regime_model.backend import UpdateBatch, run_on_host
from regime_model.batch_join import join, run_together, schedule_steps
from regime_model.update import ModelSpec, build_batch, refresh

SPEC = ModelSpec(window=32, warmup_cold=60, warmup_warm=3, draws=6, extend_max=0)
# (instruments, seed, update number) of each account: different schedules and windows
ACCOUNTS = ((2, 5, 7), (3, 11, 2), (1, 5, 9))


def _account_batches(draws: int = SPEC.draws) -> list[UpdateBatch]:
    """Each account's warm batch, from its own cold update on its own returns."""
    batches = []
    for a, (n, seed, seq) in enumerate(ACCOUNTS):
        returns = 0.01 * regime_returns(n, SPEC.window + 1, np.random.default_rng(10 + a))
        keys = np.arange(n) + 100 * a
        _, carries, _ = refresh(returns[:, :-1], [None] * n, keys, seq - 1, seed, SPEC,
                                NumpyBackend(), diagnose="none")  # fmt: skip
        warm = replace(SPEC, draws=draws)
        batches.append(build_batch(returns[:, 1:], carries, keys, seq, seed, warm)[0])
    return batches


def test_the_joined_batch_keeps_each_window_and_schedule_once_and_each_lane_its_own() -> None:
    batches = _account_batches()
    joined = join(batches)
    assert joined is not None and joined.window is not None
    assert joined.window.returns.shape == (6, SPEC.window)  # 2 + 3 + 1 instruments
    np.testing.assert_array_equal(joined.y, np.concatenate([b.y for b in batches]))
    iterations = np.arange(-SPEC.warmup_warm, SPEC.draws)
    steps, rows = schedule_steps(joined, iterations)
    assert len(steps) == 3  # three (seed, update number) pairs: three schedules
    lo = 0
    for b in batches:  # each lane's steps are its account's alone
        alone, _ = schedule_steps(b, iterations)
        lanes = rows[lo : lo + len(b.y)]
        np.testing.assert_array_equal(steps[lanes], np.repeat(alone, len(b.y), axis=0))
        lo += len(b.y)
    assert not np.array_equal(steps[0], steps[1])  # the accounts' step counts differ here


@pytest.mark.parametrize(("lane_threads", "draws"), [(8, 6), (8, 60), (0, 6)],
                         ids=["one-dispatch", "split-dispatches", "per-step"])  # fmt: skip
def test_a_joined_run_of_three_accounts_is_each_accounts_run_alone(
    gpu_device: Device, lane_threads: int, draws: int
) -> None:
    backend = lane_backend(gpu_device, lane_threads)  # 0: a dispatch per step
    batches = _account_batches(draws)
    joined = join(batches)
    assert joined is not None and backend.runs_on_device(joined)
    sampler = backend.lane_sampler
    before = 0 if sampler is None else sampler.dispatches
    together = run_together(backend, batches)
    if draws > SPEC.draws:  # llvmpipe's loop limit splits the run; each lane stops at its own
        assert sampler is not None and sampler.dispatches - before > 2  # budget (1 + summary)

    for batch, part in zip(batches, together, strict=True):
        alone = backend.run_update(batch)
        np.testing.assert_array_equal(part.draws, alone.draws)
        np.testing.assert_array_equal(part.energy, alone.energy)
        np.testing.assert_array_equal(part.step_size, alone.step_size)
        np.testing.assert_array_equal(part.mean_steps, alone.mean_steps)
        # the one-dispatch sampler's predictive and summary come with the draws
        assert (part.predictive is None) == (alone.predictive is None) == (lane_threads == 0)
        if part.predictive is not None and alone.predictive is not None:
            np.testing.assert_array_equal(part.predictive.mean, alone.predictive.mean)
            assert part.summary is not None and alone.summary is not None
            np.testing.assert_array_equal(part.summary, alone.summary)


def test_the_host_driver_refuses_a_joined_batch_and_numpy_runs_the_accounts_apart() -> None:
    batches = _account_batches()
    joined = join(batches)
    assert joined is not None
    with pytest.raises(ValueError, match="several step schedules"):
        run_on_host(NumpyBackend(), joined)
    ran = run_together(NumpyBackend(), batches)
    for batch, part in zip(batches, ran, strict=True):
        np.testing.assert_array_equal(part.draws, NumpyBackend().run_update(batch).draws)
