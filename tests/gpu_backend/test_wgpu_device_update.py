"""A warm update in one submission on the device agrees with the numpy reference sampler.

The sampler here dispatches per step, a thread per lane (wgpu_sampler): a CPU adapter's
without subgroups, and any adapter's for a window longer than workgroup memory holds.
lavapipe has subgroups, so its default is the lane sampler; these tests ask for this one."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from structlog.testing import capture_logs
from wgpu_fixtures import (  # noqa: F401 - fixtures
    fixture_gpu_device,
    lane_backend,
    run_twice_in_steady_state,
    summer_2008,
)

from gpu_backend.fallback import FallbackBackend
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.sampler_agreement import compare_draw_phase, compare_warm_samplers
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device
from gpu_backend.wgpu_sampler import fits
from regime_model.backend import UpdateBatch
from regime_model.update import ModelSpec, build_batch, refresh

SPEC = ModelSpec(window=64, warmup_cold=150, draws=30)


@pytest.fixture(name="wgpu_backend")
def fixture_per_step_backend(gpu_device: Device) -> WgpuBackend:
    """A backend with no lane threads: warm batches dispatch per step."""
    backend = lane_backend(gpu_device, 0)
    assert backend.lane_sampler is None
    return backend


def test_the_draws_make_the_host_accept_decisions_within_tolerance(
    wgpu_backend: WgpuBackend,
) -> None:
    agreement = compare_draw_phase(wgpu_backend, NumpyBackend(), SPEC, instruments=3)
    assert agreement.decision_mismatches == 0, agreement
    assert agreement.passed, agreement


def test_with_level_shift_moves_the_device_makes_the_host_decisions_too(
    wgpu_backend: WgpuBackend,
) -> None:
    """regime_model.level_shift's move on the device (shaders/jump.py): the same moves
    accepted, the same draws within tolerance, on lanes whose path the moves changed."""
    spec = replace(SPEC, shift_moves=True)
    agreement = compare_draw_phase(wgpu_backend, NumpyBackend(), spec, 3, summer_2008())
    assert agreement.shifted_lanes > 0, "no move was accepted: the test would prove nothing"
    assert agreement.decision_mismatches == 0, agreement
    assert agreement.passed, agreement


def test_a_warm_update_with_readaptation_agrees_within_monte_carlo_error(
    wgpu_backend: WgpuBackend,
) -> None:
    agreement = compare_warm_samplers(wgpu_backend, NumpyBackend(), SPEC, replicates=4)
    assert agreement.passed, agreement


def _warm_batch(instruments: int, seq: int) -> UpdateBatch:
    gen = np.random.default_rng(seq)
    returns = 0.01 * gen.standard_t(5, size=(instruments, SPEC.window))
    cpu = NumpyBackend()

    keys = np.arange(instruments)
    narrow = replace(SPEC, extend_max=0)  # carries of the batch's own chains: no run-on
    _, carries, _ = refresh(returns, [None] * instruments, keys, 1, 3, narrow, cpu)
    batch, _ = build_batch(returns, list(carries), keys, seq, 3, SPEC)
    return batch


def test_a_warm_update_is_one_submission_and_creates_nothing_once_warm(
    wgpu_backend: WgpuBackend,
) -> None:
    sampler = wgpu_backend.sampler
    assert sampler is not None
    run_twice_in_steady_state(wgpu_backend, sampler, _warm_batch(2, 2))


def test_a_batch_with_cold_lanes_stays_on_the_host_driver(wgpu_backend: WgpuBackend) -> None:
    sampler = wgpu_backend.sampler
    assert sampler is not None
    returns = 0.01 * np.random.default_rng(1).standard_t(5, size=(1, SPEC.window))
    spec = ModelSpec(window=64, warmup_cold=20, draws=4)
    batch, _ = build_batch(returns, [None], np.arange(1), 1, 3, spec)
    assert fits(batch) is not None
    before = sampler.submissions
    result = wgpu_backend.run_update(batch)
    assert sampler.submissions == before
    assert result.draws.shape == (spec.chains, spec.draws, 6)


def test_a_device_loss_in_the_one_submission_update_redoes_it_on_numpy(
    gpu_device: Device,
) -> None:
    backend = FallbackBackend(lambda: WgpuBackend(gpu_device), NumpyBackend())
    batch = _warm_batch(1, 4)
    backend.inject_gpu_fault()
    with capture_logs() as logs:
        result = backend.run_update(batch)
    assert backend.name == "numpy"
    assert [e["call"] for e in logs if e["event"] == "backend.fallback"] == ["run_update"]
    reference = NumpyBackend().run_update(batch)
    np.testing.assert_array_equal(result.draws, reference.draws)
