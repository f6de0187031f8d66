"""Fixtures of the GPU tests, imported by each test module (the name `conftest` is taken:
the daemon tests import helpers from the top-level one).

The adapter is probed once per session; a missing adapter FAILS every test that needs
it, never skips (CI installs lavapipe: `apt-get install mesa-vulkan-drivers`). On a
machine without Vulkan, install that package or leave the folder out with
`--ignore tests/gpu_backend`.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device, GpuUnavailableError, open_device
from service.bench.validate_data import closes


@functools.cache
def _probe() -> Device | str:
    try:
        return open_device()
    except GpuUnavailableError as error:
        return str(error)


@functools.cache
def _backend(device: Device) -> WgpuBackend:
    return WgpuBackend(device)


@functools.cache
def lane_backend(device: Device, lane_threads: int) -> WgpuBackend:
    """A backend with a workgroup per lane (a GPU's default; lavapipe's is a thread per
    lane), shared by the tests that ask for the same count: compiling one takes seconds."""
    return WgpuBackend(device, lane_threads=lane_threads)


def run_twice_in_steady_state(backend: WgpuBackend, sampler: Any, batch: Any) -> Any:
    """Runs `batch` twice on `backend`; the second run is one submission of `sampler` and
    creates no buffer and no pipeline, and both give the same draws bit for bit. Returns
    the first run's result."""
    first = backend.run_update(batch)
    submitted, created = sampler.submissions, backend.kernels.pool.created
    compiled = sampler.cache.compiled + backend.kernels.cache.compiled
    again = backend.run_update(batch)
    assert sampler.submissions == submitted + 1
    assert backend.kernels.pool.created == created
    assert sampler.cache.compiled + backend.kernels.cache.compiled == compiled
    np.testing.assert_array_equal(first.draws, again.draws)
    assert first.gradient_evals == again.gradient_evals
    return first


@pytest.fixture(name="gpu_device")
def fixture_gpu_device() -> Device:
    probed = _probe()
    if isinstance(probed, Device):
        return probed
    pytest.fail(f"no wgpu adapter: {probed}; install mesa-vulkan-drivers (lavapipe)")


@pytest.fixture(name="wgpu_backend")
def fixture_wgpu_backend(gpu_device: Device) -> WgpuBackend:
    """One backend (one set of compiled pipelines) for the whole session."""
    return _backend(gpu_device)


def summer_2008(instruments: int = 3, window: int = 64) -> np.ndarray:
    """[instruments, window + 1] S&P 500 log returns ending 20 bars apart before
    2008-08-13: windows with two readings (docs/benchmarks.md), where the level-shift
    move is accepted often; compare_draw_phase's series for it."""
    dates, prices = closes()
    r, end = np.diff(np.log(prices)), dates.index("2008-08-13")
    return np.stack([r[end - window - 1 - 20 * k : end - 20 * k] for k in range(instruments)])

