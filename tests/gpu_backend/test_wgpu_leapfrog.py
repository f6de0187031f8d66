"""A whole leapfrog trajectory in one submission is the host loop's trajectory, in float32."""

from __future__ import annotations

from functools import partial

import numpy as np
from structlog.testing import capture_logs
from wgpu_fixtures import fixture_gpu_device, fixture_wgpu_backend  # noqa: F401 - fixtures

from gpu_backend.fallback import FallbackBackend
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.sampler_agreement import compare_samplers
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device
from regime_model import hmc, rng
from regime_model.types import Priors
from regime_model.update import ModelSpec

K, D, T, L = 2, 6, 48, 12


def _problem(seed: int) -> tuple[np.ndarray, ...]:
    """theta, y, momentum, step sizes, inverse masses of L lanes."""
    gen = np.random.default_rng(seed)
    theta = 0.3 * gen.normal(size=(L, D))
    y = gen.normal(size=(L, T))
    momentum = gen.normal(size=(L, D))
    return theta, y, momentum, gen.uniform(0.02, 0.08, L), gen.uniform(0.5, 1.5, (L, D))


def _densities(backend: WgpuBackend, y: np.ndarray) -> tuple[hmc.FusedDensity, object]:
    host = partial(backend.hmm_value_and_grad, y=y, n_states=K, priors=Priors())
    fused = partial(backend.leapfrog, y=y, n_states=K, priors=Priors())
    return hmc.FusedDensity(host, fused), host


def test_a_fused_trajectory_ends_where_the_host_loop_does(wgpu_backend: WgpuBackend) -> None:
    theta, y, momentum, eps, inv_mass = _problem(1)
    fused, host = _densities(wgpu_backend, y)
    state = hmc.init(theta, host)
    steps = np.arange(L) % 7 + 1  # ragged: every lane its own length, 1 to 7 steps
    args = (state.position, momentum, state.grad, eps, inv_mass, steps)

    on_host = hmc.host_leapfrog(host, *args)
    on_device = fused.leapfrog(*args)

    for name, a, b in zip(("x", "p", "logp", "grad"), on_host, on_device, strict=True):
        scale = max(1.0, float(np.abs(a).max()))
        assert np.abs(a - b).max() <= 2e-5 * scale, name


def test_a_lane_shorter_than_the_batch_ends_where_its_solo_run_would(
    wgpu_backend: WgpuBackend,
) -> None:
    theta, y, momentum, eps, inv_mass = _problem(2)
    fused, host = _densities(wgpu_backend, y)
    state = hmc.init(theta, host)
    steps = np.full(L, 6)
    steps[0] = 2
    batched = fused.leapfrog(state.position, momentum, state.grad, eps, inv_mass, steps)
    solo = fused.leapfrog(state.position, momentum, state.grad, eps, inv_mass, np.full(L, 2))
    for a, b in zip(batched, solo, strict=True):
        np.testing.assert_array_equal(a[0], b[0])


def test_hmc_step_on_the_fused_path_matches_the_host_loop(wgpu_backend: WgpuBackend) -> None:
    theta, y, _, eps, inv_mass = _problem(3)
    fused, host = _densities(wgpu_backend, y)
    stream = rng.make_stream(9, np.arange(L, dtype=np.uint32), np.zeros(L, np.uint32), 1)
    state, params = hmc.init(theta, host), hmc.HMCParams(eps, inv_mass)
    for it in range(4):
        key = hmc.Key(stream, it)
        new_host, info_host = hmc.step(key, state, params, host, 5)
        new_fused, info_fused = hmc.step(key, state, params, fused, 5)
        np.testing.assert_allclose(new_fused.position, new_host.position, atol=1e-5)
        np.testing.assert_allclose(info_fused.energy, info_host.energy, rtol=1e-5, atol=1e-3)
        state = new_host


def test_a_faulted_lane_is_a_divergence_not_a_crash(wgpu_backend: WgpuBackend) -> None:
    theta, y, _, eps, inv_mass = _problem(4)
    fused, host = _densities(wgpu_backend, y)
    stream = rng.make_stream(9, np.arange(L, dtype=np.uint32), np.zeros(L, np.uint32), 1)
    eps[0] = 1e30  # the first lane's trajectory overflows on its first drift
    state = hmc.init(theta, host)
    new, info = hmc.step(hmc.Key(stream, 0), state, hmc.HMCParams(eps, inv_mass), fused, 4)
    assert info.is_divergent[0] and not info.is_accepted[0]
    np.testing.assert_array_equal(new.position[0], state.position[0])
    assert np.isfinite(new.logdensity).all() and not info.is_divergent[1:].any()


def test_a_device_loss_mid_trajectory_is_redone_by_the_host_loop_on_numpy(
    gpu_device: Device,
) -> None:
    backend = FallbackBackend(lambda: WgpuBackend(gpu_device), NumpyBackend())
    theta, y, momentum, eps, inv_mass = _problem(5)
    cpu = partial(NumpyBackend().hmm_value_and_grad, y=y, n_states=K, priors=Priors())
    state = hmc.init(theta, cpu)
    args = (state.position, momentum, state.grad, eps, inv_mass, np.full(L, 3))
    backend.inject_gpu_fault()
    with capture_logs() as logs:
        out = backend.leapfrog(*args, y=y, n_states=K, priors=Priors())
    assert backend.name == "numpy"
    assert [e["call"] for e in logs if e["event"] == "backend.fallback"] == ["leapfrog"]
    for a, b in zip(out, hmc.host_leapfrog(cpu, *args), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_full_refresh_on_the_fused_path_agrees_with_numpy(wgpu_backend: WgpuBackend) -> None:
    # The fused trajectories are under test: without the level-shift move, whose density
    # calls are not fused (its agreement: test_wgpu_device_update, verify-gpu).
    spec = ModelSpec(warmup_cold=150, draws=20, shift_moves=False)
    agreement = compare_samplers(wgpu_backend, NumpyBackend(), spec, instruments=2, replicates=4)
    assert agreement.passed, agreement
