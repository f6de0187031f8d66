"""The wgpu kernels compute what the numpy float64 reference computes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from wgpu_fixtures import fixture_gpu_device, fixture_wgpu_backend  # noqa: F401 - fixtures

from gpu_backend.identity import GRAD_TOL, LOGP_TOL, compare_point_set, edge_points
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device
from regime_model.posterior import log_density_and_grad
from regime_model.types import Priors


@pytest.mark.parametrize("K", [2, 3, 4])
def test_log_density_gradient_and_predictive_match_float64(
    wgpu_backend: WgpuBackend, K: int
) -> None:
    check = compare_point_set(wgpu_backend, NumpyBackend(), K, T=200, lanes=12)
    assert check.logp_err <= LOGP_TOL
    assert check.grad_err <= GRAD_TOL
    assert check.passed, check


def test_a_thousand_bar_window_stays_within_the_gate(wgpu_backend: WgpuBackend) -> None:
    check = compare_point_set(wgpu_backend, NumpyBackend(), 2, T=1000, lanes=6)
    assert check.passed, check


def test_custom_priors_reach_the_kernel(wgpu_backend: WgpuBackend) -> None:
    priors = Priors(mu_loc=0.3, mu_scale=0.5, alpha_stay=5.0, alpha_move=2.0, eta_scale=0.2)
    theta = edge_points(3)
    y = np.random.default_rng(3).normal(size=(len(theta), 80))
    lp, g = wgpu_backend.hmm_value_and_grad(theta, y, 3, priors)
    ref_lp, ref_g = log_density_and_grad(theta, y, 3, priors)
    np.testing.assert_allclose(lp, ref_lp, rtol=1e-6)
    np.testing.assert_allclose(g, ref_g, rtol=1e-4, atol=1e-4 * np.abs(ref_g).max())


def test_compensated_f32_sums_pass_the_same_gate(gpu_device: Device) -> None:
    kahan = WgpuBackend(gpu_device, accumulate="kahan")
    assert "kahan" in kahan.numerics
    assert compare_point_set(kahan, NumpyBackend(), 2, T=500, lanes=6).passed


def test_lanes_split_over_several_dispatches_give_the_same_numbers(
    gpu_device: Device, wgpu_backend: WgpuBackend
) -> None:
    small = dataclasses.replace(gpu_device.info, max_binding=4 * 2 * 50 * 5)  # 5 lanes each
    chunked = WgpuBackend(Device(gpu_device.handle, small, gpu_device.errors))
    rng = np.random.default_rng(4)
    theta, y = 0.3 * rng.normal(size=(13, 6)), rng.normal(size=(13, 50))
    assert chunked.kernels.max_lanes(2, 50, 6) == 5
    for a, b in zip(
        chunked.hmm_value_and_grad(theta, y, 2, Priors()),
        wgpu_backend.hmm_value_and_grad(theta, y, 2, Priors()),
        strict=True,
    ):
        np.testing.assert_array_equal(a, b)


def test_bad_shapes_are_refused_before_the_device_is_touched(wgpu_backend: WgpuBackend) -> None:
    created = wgpu_backend.kernels.pool.created
    with pytest.raises(ValueError, match=r"theta must be \[L, 6\] for K=2"):
        wgpu_backend.hmm_value_and_grad(np.zeros((3, 5)), np.zeros((3, 10)), 2, Priors())
    with pytest.raises(ValueError, match=r"y must be \[L=3"):
        wgpu_backend.hmm_predictive(np.zeros((3, 6)), np.zeros((4, 10)), 2)
    with pytest.raises(ValueError, match=r"n_states must be in 2\.\.4"):
        wgpu_backend.hmm_predictive(np.zeros((3, 6)), np.zeros((3, 10)), 5)
    assert wgpu_backend.kernels.pool.created == created


def test_backend_reports_its_adapter_and_numerics(
    gpu_device: Device, wgpu_backend: WgpuBackend
) -> None:
    assert wgpu_backend.name == "wgpu"
    assert wgpu_backend.adapter == gpu_device.info.adapter
    assert wgpu_backend.numerics.startswith("float32")
