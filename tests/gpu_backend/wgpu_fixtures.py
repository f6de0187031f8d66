"""Fixtures of the GPU tests, imported by each test module (the name `conftest` is taken:
the daemon tests import helpers from the top-level one).

The adapter is probed once per session; a missing adapter FAILS every test that needs
it, never skips (CI installs lavapipe: `apt-get install mesa-vulkan-drivers`). On a
machine without Vulkan, install that package or leave the folder out with
`--ignore tests/gpu_backend`.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device, GpuUnavailableError, open_device
from regime_model.batches import UpdateBatch
from regime_model.sampler import SampleResult
from regime_model.update import ModelSpec, build_batch, refresh
from service.bench.validate_data import closes

# The warm batches of the same-bits tests: short windows, few draws (lavapipe's time)
SHORT_SPEC = ModelSpec(window=64, warmup_cold=150, draws=30)


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



@pytest.fixture(name="two_readings_batch")
def fixture_two_readings_batch(wgpu_backend: WgpuBackend) -> UpdateBatch:
    """Three instruments' warm batch over windows with two readings (the move is taken)."""
    returns = summer_2008(3, SHORT_SPEC.window)
    keys = np.arange(3, dtype=np.uint32)
    cold_spec = replace(SHORT_SPEC, extend_max=0)
    _, carries, _ = refresh(returns[:, :-1], [None] * 3, keys, 1, 5, cold_spec, wgpu_backend,
                            diagnose="none")  # fmt: skip
    return build_batch(returns[:, 1:], carries, keys, 2, 5, SHORT_SPEC)[0]


def assert_same_bits(a: SampleResult, b: SampleResult) -> None:
    """Two runs' draws, energies, acceptance, step sizes, divergences, summary and each
    draw's predictive, bit for bit."""
    for name in ("draws", "energy", "acceptance", "step_size", "divergences", "summary"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.predictive is not None and b.predictive is not None
    for x, y in zip(a.predictive, b.predictive, strict=True):
        np.testing.assert_array_equal(x, y)
