"""The predictive of a run's draws reads each chain's window once: lane l of theta reads row
l // draws_per_row of y, on every backend the same as with the window repeated per draw
(estimate.py asked with y repeated 40 times: an 88 MB float64 copy at 268 instruments), and
on the device each row goes up once (reweighing a trial account's 28,800 draws sent 36 MB
when the kernels read a copy per draw)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from wgpu_fixtures import fixture_gpu_device, lane_backend  # noqa: F401 - fixture

from gpu_backend.backend_traffic import take_traffic
from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device
from gpu_backend.wgpu_inputs import time_major
from gpu_backend.wgpu_kernels import PARAMS_BYTES
from regime_model.params import log_prior, n_params
from regime_model.posterior import log_density_and_grad
from regime_model.types import Priors

K, S = 2, 5


def _inputs(rows: int) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(rows)
    theta = 0.3 * gen.standard_normal((rows * S, n_params(K))) + [0, 0, -1, 0.5, -3, -3]
    return theta, regime_returns(rows, 40, gen)


def test_numpy_reads_each_row_for_its_draws_to_the_bit() -> None:
    theta, y = _inputs(3)
    shared = NumpyBackend().hmm_predictive(theta, y, K, draws_per_row=S)
    repeated = NumpyBackend().hmm_predictive(theta, np.repeat(y, S, axis=0), K)
    for a, b in zip(shared, repeated, strict=True):
        assert np.array_equal(a, b)


def test_wgpu_reads_each_row_for_its_draws_to_the_bit(gpu_device: Device) -> None:
    theta, y = _inputs(7)
    gpu = WgpuBackend(gpu_device)
    shared = gpu.hmm_predictive(theta, y, K, draws_per_row=S)
    repeated = gpu.hmm_predictive(theta, np.repeat(y, S, axis=0), K)
    for a, b in zip(shared, repeated, strict=True):
        assert np.array_equal(a, b)


def test_the_scan_kernels_read_each_row_for_its_draws_to_the_bit(gpu_device: Device) -> None:
    """A GPU's workgroup per lane (shaders/hmm_scan.py) loads the lane's window from its row."""
    theta, y = _inputs(7)
    scans = lane_backend(gpu_device, 8)
    assert scans.kernels.scans(y.shape[1])
    shared = scans.hmm_predictive_and_likelihood(theta, y, K, draws_per_row=S)
    repeated = scans.hmm_predictive_and_likelihood(theta, np.repeat(y, S, axis=0), K)
    for a, b in zip([*shared[0], shared[1]], [*repeated[0], repeated[1]], strict=True):
        assert np.array_equal(a, b)


def test_each_row_goes_up_once_not_once_per_draw(gpu_device: Device) -> None:
    theta, y = _inputs(7)
    gpu = WgpuBackend(gpu_device)
    take_traffic(gpu)
    gpu.hmm_predictive_and_likelihood(theta, y, K, draws_per_row=S)
    sent = take_traffic(gpu)
    assert sent.submissions == 1
    assert sent.upload_bytes == PARAMS_BYTES + 4 * y.size + 4 * theta.size


@pytest.mark.parametrize("per_row", [1, 2, 5, 7])
def test_dispatches_of_few_lanes_give_the_same_bits(gpu_device: Device, per_row: int) -> None:
    """A dispatch of 5 lanes: rows of 2 or 5 draws go whole into each (4 and 5 lanes), a
    row of 7 draws spans two dispatches, which then read copies of it."""
    gen = np.random.default_rng(per_row)
    theta = 0.3 * gen.standard_normal((3 * per_row, n_params(K))) + [0, 0, -1, 0.5, -3, -3]
    y = regime_returns(3, 40, gen)
    small = dataclasses.replace(gpu_device.info, max_binding=4 * K * 40 * 5)
    chunked = WgpuBackend(Device(gpu_device.handle, small, gpu_device.errors))
    assert chunked.kernels.max_lanes(K, 40, K + 2) == 5
    whole = WgpuBackend(gpu_device)
    a = chunked.hmm_predictive_and_likelihood(theta, y, K, draws_per_row=per_row)
    b = whole.hmm_predictive_and_likelihood(theta, np.repeat(y, per_row, axis=0), K)
    for x, z in zip([*a[0], a[1]], [*b[0], b[1]], strict=True):
        assert np.array_equal(x, z)


@pytest.mark.parametrize(("lo", "hi"), [(0, 35), (3, 17), (10, 11), (34, 35)])
def test_a_block_of_lanes_packs_the_rows_its_lanes_read(lo: int, hi: int) -> None:
    _, y = _inputs(7)
    expected = np.ascontiguousarray(np.repeat(y, S, axis=0)[lo:hi].T, dtype=np.float32)
    assert np.array_equal(time_major(y, lo, hi, S), expected)


def test_rows_that_do_not_match_the_lanes_are_refused(gpu_device: Device) -> None:
    theta, y = _inputs(3)
    with pytest.raises(ValueError, match=r"y must be \[L=15 / 4 lanes a row"):
        WgpuBackend(gpu_device).hmm_predictive(theta, y, K, draws_per_row=4)


def test_the_likelihood_beside_the_predictive_is_the_densitys_on_every_backend(
    gpu_device: Device,
) -> None:
    """hmm_predictive_and_likelihood: the predictive as hmm_predictive's, and log p(y) that
    with the prior is the log density the sampler reads. numpy runs one forward filter
    where those take tree products (float64's rounding apart); the device's kernel is the
    predictive's own (to the bit), its likelihood within float32's error."""
    theta, y = _inputs(6)
    priors = Priors()
    for backend in (NumpyBackend(), WgpuBackend(gpu_device)):
        pred, ll = backend.hmm_predictive_and_likelihood(theta, y, K, draws_per_row=S)
        for a, b in zip(pred, backend.hmm_predictive(theta, y, K, draws_per_row=S), strict=True):
            if backend.name == "numpy":
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
            else:
                assert np.array_equal(a, b)
        density, _ = log_density_and_grad(theta, np.repeat(y, S, axis=0), K, priors)
        with_prior = ll + log_prior(theta, K, priors)[0]
        atol = 1e-10 if backend.name == "numpy" else 2e-3
        np.testing.assert_allclose(with_prior, density, rtol=0, atol=atol)
