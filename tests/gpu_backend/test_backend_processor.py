"""Where a backend's sampler runs, which [model] sample_between_bars = "auto" reads: a CPU
(numpy, lavapipe, a GPU fallen back to numpy) or a GPU, through whatever wraps it."""

from __future__ import annotations

import dataclasses

from wgpu_fixtures import fixture_gpu_device  # noqa: F401 - fixture

from gpu_backend.backend_processor import runs_on_cpu
from gpu_backend.device_client import SharedDeviceBackend
from gpu_backend.fallback import FallbackBackend
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device, GpuUnavailableError
from service.worker.between_bars import between_bars_on


def _as_gpu(device: Device) -> Device:
    """The same adapter, reported as a discrete GPU (what the H200 reports)."""
    return Device(device.handle, dataclasses.replace(device.info, adapter_type="DiscreteGPU"),
                  device.errors)  # fmt: skip


def test_numpy_and_a_cpu_adapter_run_on_a_cpu(gpu_device: Device) -> None:
    assert gpu_device.info.adapter_type == "CPU"  # lavapipe, as CI runs it
    assert runs_on_cpu(NumpyBackend())
    assert runs_on_cpu(WgpuBackend(gpu_device))
    assert runs_on_cpu(FallbackBackend(lambda: WgpuBackend(gpu_device), NumpyBackend()))


def test_a_gpu_runs_on_a_gpu_whatever_wraps_it(gpu_device: Device) -> None:
    gpu = WgpuBackend(_as_gpu(gpu_device))
    assert not runs_on_cpu(gpu)
    wrapped = FallbackBackend(lambda: gpu, NumpyBackend())
    assert not runs_on_cpu(wrapped)
    assert not runs_on_cpu(SharedDeviceBackend(wrapped, "/nowhere", b"key", "alpha"))


def test_a_gpu_fallen_back_to_numpy_runs_on_a_cpu() -> None:
    def lost() -> WgpuBackend:
        raise GpuUnavailableError("no adapter")

    assert runs_on_cpu(FallbackBackend(lost, NumpyBackend()))


def test_auto_samples_between_bars_on_a_cpu_only(gpu_device: Device) -> None:
    gpu = WgpuBackend(_as_gpu(gpu_device))
    assert between_bars_on("auto", NumpyBackend()) and not between_bars_on("auto", gpu)
    assert between_bars_on(True, gpu) and not between_bars_on(False, NumpyBackend())
