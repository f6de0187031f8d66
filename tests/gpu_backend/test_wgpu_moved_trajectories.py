"""A transition's move and trajectory in one submission (the host driver's cold lanes):
both candidate trajectories, from the positions and from the move's proposals, agree with
the same calls made one after another, and a cold update takes about half the submissions."""

from __future__ import annotations

import functools
from functools import partial

import numpy as np
from structlog.testing import capture_logs
from wgpu_fixtures import fixture_gpu_device, summer_2008  # noqa: F401 - fixture

from gpu_backend.backend_traffic import take_traffic
from gpu_backend.fallback import FallbackBackend
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device
from regime_model import hmc
from regime_model.jump_move import moved_by_parts
from regime_model.level_shift import shifted
from regime_model.types import Priors
from regime_model.update import ModelSpec, build_batch

K, D, T, L = 2, 6, 48, 12


@functools.cache
def _fused(device: Device) -> WgpuBackend:
    """The GPU's default (lavapipe's is off: a CPU pays for the speculative lanes)."""
    return WgpuBackend(device, fuse_moves=True)


def test_both_trajectories_in_one_submission_match_the_calls_one_by_one(
    gpu_device: Device,
) -> None:
    backend = _fused(gpu_device)
    assert backend.moved_leapfrog is not None
    gen = np.random.default_rng(5)
    theta, y = 0.3 * gen.normal(size=(L, D)), gen.normal(size=(L, T))
    momentum, eps = gen.normal(size=(L, D)), gen.uniform(0.02, 0.08, L)
    inv_mass, steps = gen.uniform(0.5, 1.5, (L, D)), np.arange(L) % 5 + 1
    bound = {"y": y, "n_states": K, "priors": Priors()}
    density = partial(backend.hmm_value_and_grad, **bound)
    grad = hmc.init(theta, density).grad
    proposal = shifted(theta, np.arange(L) % 2 == 0, K)
    args = (theta, grad, proposal, momentum, eps, inv_mass, steps)
    take_traffic(backend)
    at_once = backend.moved_leapfrog(*args, **bound)
    assert take_traffic(backend).submissions == 1
    by_parts = moved_by_parts(density, partial(backend.leapfrog, **bound), *args)
    assert take_traffic(backend).submissions == 3
    for got, want in zip(at_once[:2], by_parts[:2], strict=True):
        for name, a, b in zip(("x", "p", "logp", "grad"), got, want, strict=True):
            assert np.abs(a - b).max() <= 2e-5 * max(1.0, float(np.abs(b).max())), name
    np.testing.assert_allclose(at_once.proposal_logdensity, by_parts.proposal_logdensity,
                               rtol=1e-6)  # fmt: skip
    np.testing.assert_allclose(at_once.proposal_grad, by_parts.proposal_grad, rtol=1e-4,
                               atol=1e-4)  # fmt: skip


def test_a_cold_update_takes_half_the_submissions_and_the_same_decisions(
    gpu_device: Device,
) -> None:
    """Cold lanes of two 2008 windows with two readings (the move is accepted), a short
    warm-up so that float32 rounding does not part the two runs: every draw accepted or
    rejected alike, the draws close."""
    spec = ModelSpec(window=64, chains=4, warmup_cold=24, draws=8)
    returns = summer_2008(2, spec.window)[:, 1:]
    batch, _ = build_batch(returns, [None, None], np.arange(2), 1, 7, spec)
    apart = WgpuBackend(gpu_device, fuse_moves=False)
    take_traffic(apart)
    one_by_one = apart.run_update(batch)
    submitted_apart = take_traffic(apart).submissions
    fused = _fused(gpu_device)
    take_traffic(fused)
    at_once = fused.run_update(batch)
    submitted = take_traffic(fused).submissions
    iterations = spec.warmup_cold + spec.draws
    assert submitted_apart == 1 + 2 * iterations  # the start's density, then 2 per iteration
    assert submitted == 1 + iterations
    rejected = [(x[:, 1:] == x[:, :-1]).all(axis=2) for x in (at_once.draws, one_by_one.draws)]
    np.testing.assert_array_equal(rejected[0], rejected[1])
    # The proposals' opening half kick is float32 on the device instead of float64 on the
    # host; through 24 iterations of step-size adaptation that grew to 6e-3 in the draws
    # and 1.5e-3 to 5.5e-3 in a lane's mean acceptance of the move (lavapipe over OpenGL
    # and over Vulkan, measured): bounds with room; the decisions above carry the proof.
    np.testing.assert_allclose(at_once.draws, one_by_one.draws, atol=3e-2)
    np.testing.assert_allclose(at_once.shift_rate, one_by_one.shift_rate, atol=3e-2)
    assert (one_by_one.shift_rate > 0).any()


def test_a_device_loss_in_the_fused_call_is_redone_on_numpy_by_parts(gpu_device: Device) -> None:
    backend = FallbackBackend(lambda: _fused(gpu_device), NumpyBackend())
    moved = backend.moved_leapfrog
    assert moved is not None
    gen = np.random.default_rng(6)
    theta, y = 0.3 * gen.normal(size=(L, D)), gen.normal(size=(L, T))
    cpu = NumpyBackend()
    bound = {"y": y, "n_states": K, "priors": Priors()}
    grad = hmc.init(theta, partial(cpu.hmm_value_and_grad, **bound)).grad
    args = (theta, grad, shifted(theta, np.ones(L, bool), K), gen.normal(size=(L, D)),
            np.full(L, 0.05), np.ones((L, D)), np.full(L, 3))  # fmt: skip
    backend.inject_gpu_fault()
    with capture_logs() as logs:
        got = moved(*args, **bound)
    want = moved_by_parts(partial(cpu.hmm_value_and_grad, **bound),
                          partial(cpu.leapfrog, **bound), *args)  # fmt: skip
    for a, b in zip(got[:2], want[:2], strict=True):
        for x, z in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, z)
    assert [e["call"] for e in logs if e["event"] == "backend.fallback"] == ["moved_leapfrog"]
    assert backend.moved_leapfrog is None  # the device is gone until the retry
