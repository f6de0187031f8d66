"""Two accounts' warm runs (each its own backend: buffers, returns ring, pipelines) on the
device they share, in ONE submission: each comes back the bits of its run alone; a backend
that cannot run its batch so is refused before anything is recorded."""

from __future__ import annotations

import numpy as np
import pytest
from wgpu_fixtures import fixture_gpu_device, lane_backend  # noqa: F401 - fixture

from gpu_backend.identity import regime_returns
from gpu_backend.joint_submission import run_in_one_submission
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.wgpu_device import Device
from regime_model.backend import UpdateBatch
from regime_model.update import ModelSpec, build_batch, refresh

SPEC = ModelSpec(window=64, warmup_cold=150, draws=30, extend_max=0)  # narrow carries


def _account(instruments: int, seed: int) -> UpdateBatch:
    """An account's warm batch: its own returns, keys and seed (so its own schedule)."""
    returns = 0.01 * regime_returns(instruments, SPEC.window, np.random.default_rng(seed))
    keys = np.arange(instruments)
    _, carries, _ = refresh(returns, [None] * instruments, keys, 1, seed, SPEC, NumpyBackend())
    return build_batch(returns, list(carries), keys, 2, seed, SPEC)[0]


def test_two_accounts_in_one_submission_are_the_bits_of_each_alone(gpu_device: Device) -> None:
    first, second = lane_backend(gpu_device, 8), lane_backend(gpu_device, 32)
    a, b = _account(2, 5), _account(3, 6)
    alone = [first.run_update(a), second.run_update(b)]
    queue = gpu_device.handle.queue
    submitted = queue.submissions
    together = run_in_one_submission([(first, a), (second, b)])
    assert queue.submissions == submitted + 1
    for one, joint in zip(alone, together, strict=True):
        for field in ("draws", "acceptance", "step_size", "energy", "divergences"):
            np.testing.assert_array_equal(getattr(one, field), getattr(joint, field), field)
        assert one.predictive is not None and joint.predictive is not None
        np.testing.assert_array_equal(one.predictive.filtered_last, joint.predictive.filtered_last)


def test_a_backend_without_the_lane_sampler_is_refused(gpu_device: Device) -> None:
    per_step = lane_backend(gpu_device, 0)  # a thread per lane: no one-dispatch sampler
    with pytest.raises(ValueError, match="lane sampler"):
        run_in_one_submission([(lane_backend(gpu_device, 8), _account(2, 5)),
                               (per_step, _account(2, 6))])  # fmt: skip
