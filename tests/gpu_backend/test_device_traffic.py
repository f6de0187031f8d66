"""Submissions and uploaded bytes are counted at the device's queue, exactly, whichever
kernel sends them, and read per backend (zero where there is no device)."""

from __future__ import annotations

import numpy as np
from wgpu_fixtures import fixture_gpu_device, fixture_wgpu_backend  # noqa: F401 - fixtures

from gpu_backend.backend_traffic import take_traffic
from gpu_backend.device_traffic import NO_TRAFFIC, Traffic
from gpu_backend.fallback import FallbackBackend
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device
from regime_model.params import n_params
from regime_model.types import Priors

K, T, L = 2, 40, 12
PARAMS_BYTES = 64  # the uniform block of every HMM launch (16 words)


def test_one_value_and_gradient_call_is_one_submission_of_known_bytes(
    wgpu_backend: WgpuBackend,
) -> None:
    rng = np.random.default_rng(3)
    theta = 0.3 * rng.standard_normal((L, n_params(K)))
    y = rng.standard_normal((L, T))
    take_traffic(wgpu_backend)  # what earlier tests sent on this shared device
    wgpu_backend.hmm_value_and_grad(theta, y, K, Priors())
    # params, then y and theta packed in float32
    assert take_traffic(wgpu_backend) == Traffic(1, PARAMS_BYTES + 4 * T * L + 4 * L * n_params(K))
    assert take_traffic(wgpu_backend) == NO_TRAFFIC  # taken: counted once


def test_uploads_at_buffer_creation_count_too(gpu_device: Device) -> None:
    import wgpu  # noqa: PLC0415

    take_traffic_of = gpu_device.handle.take
    take_traffic_of()
    data = np.arange(64, dtype=np.float32)
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST
    buffer = gpu_device.handle.create_buffer_with_data(data=data, usage=usage)
    gpu_device.handle.queue.write_buffer(buffer, 0, data, 16, 32)  # 32 bytes from byte 16
    assert take_traffic_of() == Traffic(0, data.nbytes + 32)
    buffer.destroy()


def test_the_fallback_reports_its_device_and_numpy_reports_none(
    wgpu_backend: WgpuBackend,
) -> None:
    served = FallbackBackend(lambda: wgpu_backend, NumpyBackend())
    take_traffic(served)
    theta = np.zeros((2, n_params(K)))
    served.hmm_predictive(theta, np.ones((2, T)), K)
    assert take_traffic(served).submissions == 1
    assert take_traffic(NumpyBackend()) == NO_TRAFFIC


def test_a_move_and_a_trajectory_on_the_same_returns_upload_them_once(
    wgpu_backend: WgpuBackend,
) -> None:
    """The host driver (cold lanes) alternates the level-shift move's density call and a
    leapfrog trajectory on one y: y goes up with the first call, then only positions,
    momenta and parameters do (before, y went up twice per iteration: 150 MB per cold
    update of the trial shape's account)."""
    D = n_params(K)
    rng = np.random.default_rng(4)
    theta, y = 0.3 * rng.standard_normal((L, D)), rng.standard_normal((L, T))

    def iteration() -> None:  # equal values in a new array each call, as the driver's may be
        _, grad = wgpu_backend.hmm_value_and_grad(theta, y.copy(), K, Priors())
        wgpu_backend.leapfrog(theta, np.zeros_like(theta), grad, np.full(L, 0.01),
                              np.ones_like(theta), np.full(L, 2), y.copy(), K, Priors())

    iteration()  # the pool may grow its buffers (and then y goes up again) the first time
    take_traffic(wgpu_backend)
    for _ in range(3):
        iteration()
    move = PARAMS_BYTES + 4 * L * D  # params and theta
    trajectory = PARAMS_BYTES + 16 + 3 * 4 * L * D + 8 * L + 4 * L  # + theta, momenta, drift, lanes
    assert take_traffic(wgpu_backend) == Traffic(6, 3 * (move + trajectory))
