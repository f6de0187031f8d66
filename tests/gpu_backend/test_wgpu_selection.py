"""`auto` keeps the faster backend for the account's batch shape and says why."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs
from wgpu_fixtures import fixture_gpu_device, fixture_wgpu_backend  # noqa: F401 - fixtures

from gpu_backend import BatchShape, select_backend
from gpu_backend.backend_traffic import take_traffic
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.selection import (
    PROBE_DRAWS,
    probe_batch,
    select_auto,
    time_value_and_grad,
    time_warm_update,
)
from gpu_backend.wgpu_backend import WgpuBackend
from regime_model.backend import Backend
from service.settings import ModelSettings


def _auto(gpu_ms: float, cpu_ms: float) -> tuple[Backend, list[dict[str, object]]]:
    from gpu_backend.numpy_backend import NumpyBackend  # noqa: PLC0415
    from gpu_backend.wgpu_backend import WgpuBackend  # noqa: PLC0415

    def timer(backend: Backend, shape: BatchShape) -> float:
        return (gpu_ms if backend.name == "wgpu" else cpu_ms) / 1e3

    with capture_logs() as logs:
        chosen = select_auto(BatchShape(8, 32, 2), WgpuBackend, NumpyBackend(), timer=timer)
    return chosen, logs


@pytest.mark.usefixtures("gpu_device")
@pytest.mark.parametrize(("gpu_ms", "cpu_ms", "choice"), [(1.0, 5.0, "wgpu"), (5.0, 1.0, "numpy")])
def test_auto_picks_the_faster_and_logs_the_figures(
    gpu_ms: float, cpu_ms: float, choice: str
) -> None:
    chosen, logs = _auto(gpu_ms, cpu_ms)
    assert chosen.name == choice
    (event,) = [e for e in logs if e["event"] == "backend.selected"]
    assert (event["choice"], event["gpu_ms"], event["cpu_ms"]) == (choice, gpu_ms, cpu_ms)
    assert event["lanes"] == 8


@pytest.mark.usefixtures("gpu_device")
def test_auto_on_real_backends_keeps_the_one_it_measured_faster() -> None:
    """Both backends timed for real on the shape (lavapipe in CI, where the adapter is
    required): the choice is the faster of the two figures it logs, and it computes."""
    with capture_logs() as logs:
        backend = select_backend("auto", BatchShape(4, 16, 2))
    (event,) = [e for e in logs if e["event"] == "backend.selected"]
    assert event["cpu_ms"] > 0.0 and event["gpu_ms"] > 0.0
    faster = "wgpu" if event["gpu_ms"] < event["cpu_ms"] else "numpy"
    assert event["choice"] == faster == backend.name
    assert time_value_and_grad(backend, BatchShape(4, 16, 2), repeats=1) > 0.0


@pytest.mark.parametrize("lanes", [32, 6])
def test_the_probe_is_a_warm_update_of_the_shape_that_a_device_runs_in_one_submission(
    wgpu_backend: WgpuBackend, lanes: int
) -> None:
    """What `auto` times is the work that repeats at every bar: a warm batch of the shape's
    lanes (no metric to adapt), which the device runs in one submission, as it runs the
    daemon's warm updates, and whose draws both backends make."""
    shape = BatchShape(lanes, 64, 2)
    batch = probe_batch(shape)
    assert batch.y.shape == (lanes, 64) and not batch.start.adapt_mass.any()
    assert wgpu_backend.runs_on_device(batch)
    take_traffic(wgpu_backend)  # what earlier tests sent on this shared device
    result = wgpu_backend.run_update(batch)
    assert take_traffic(wgpu_backend).submissions == 1
    assert result.draws.shape[:2] == (lanes, PROBE_DRAWS)
    assert time_warm_update(NumpyBackend(), shape, repeats=1) > 0.0


def test_auto_without_a_shape_keeps_the_reference() -> None:
    assert select_backend("auto").name == "numpy"


def test_settings_accept_the_wgpu_backend() -> None:
    assert ModelSettings(backend="wgpu").backend == "wgpu"
