"""A failing or missing GPU never stops an update: numpy redoes the call, the GPU is retried."""

from __future__ import annotations

import numpy as np
from structlog.testing import capture_logs
from wgpu_fixtures import fixture_gpu_device, fixture_wgpu_backend  # noqa: F401 - fixtures

from gpu_backend import select_backend
from gpu_backend.fallback import FallbackBackend
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device, GpuUnavailableError
from regime_model.posterior import log_density_and_grad
from regime_model.types import Priors


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return 0.3 * rng.normal(size=(4, 6)), rng.normal(size=(4, 40))


def test_an_injected_device_loss_is_redone_on_numpy_and_logged(gpu_device: Device) -> None:
    clock = FakeClock()
    backend = FallbackBackend(lambda: WgpuBackend(gpu_device), NumpyBackend(), clock=clock)
    theta, y = _inputs()
    backend.hmm_value_and_grad(theta, y, 2, Priors())
    assert backend.name == "wgpu"
    backend.inject_gpu_fault()
    with capture_logs() as logs:
        logp, grad = backend.hmm_value_and_grad(theta, y, 2, Priors())
    ref_logp, ref_grad = log_density_and_grad(theta, y, 2, Priors())
    np.testing.assert_array_equal(logp, ref_logp)
    np.testing.assert_array_equal(grad, ref_grad)
    (event,) = [e for e in logs if e["event"] == "backend.fallback"]
    assert "simulated device loss" in event["reason"]
    assert (backend.name, backend.numerics) == ("numpy", "float64")


def test_the_gpu_is_retried_after_the_back_off(gpu_device: Device) -> None:
    clock = FakeClock()
    opened: list[WgpuBackend] = []

    def factory() -> WgpuBackend:
        opened.append(WgpuBackend(gpu_device))
        return opened[-1]

    backend = FallbackBackend(factory, NumpyBackend(), retry_after_s=60.0, clock=clock)
    theta, y = _inputs()
    backend.inject_gpu_fault()
    backend.hmm_predictive(theta, y, 2)
    clock.now = 59.0
    backend.hmm_predictive(theta, y, 2)
    assert backend.name == "numpy" and len(opened) == 1
    clock.now = 60.0
    backend.hmm_predictive(theta, y, 2)
    assert backend.name == "wgpu" and len(opened) == 2


def test_a_missing_adapter_falls_back_at_start() -> None:
    def no_adapter() -> WgpuBackend:
        raise GpuUnavailableError("no wgpu adapter found")

    with capture_logs() as logs:
        backend = FallbackBackend(no_adapter, NumpyBackend())
        theta, y = _inputs()
        backend.hmm_value_and_grad(theta, y, 2, Priors())
    assert backend.name == "numpy"
    assert [e["reason"] for e in logs if e["event"] == "backend.fallback"] == [
        "no wgpu adapter found"
    ]


def test_the_registry_serves_wgpu_behind_its_fallback(gpu_device: Device) -> None:
    backend = select_backend("wgpu")
    assert isinstance(backend, FallbackBackend)
    assert (backend.name, backend.adapter) == ("wgpu", gpu_device.info.adapter)
