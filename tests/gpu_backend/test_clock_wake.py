"""A GPU's clocks are raised just before each paced update: a throwaway device, opened and
released on a timer thread `lead_s` ahead of the work, once per bar and host (the clocks
are the GPU's); a CPU adapter is left alone; the device a wake opens is freed, so a wake
per bar for weeks holds no memory."""

from __future__ import annotations

import fcntl
import gc
import os
import threading
import time
from pathlib import Path

from wgpu_fixtures import fixture_gpu_device  # noqa: F401 - fixture

from gpu_backend.clock_wake import ClockWake, OncePerHost, ThrowawayDevice
from gpu_backend.fallback import FallbackBackend
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device

DEADLINE_S = 60.0  # a loaded machine's worst case; a wake normally comes in milliseconds


class Wakes:
    """A wake that records itself."""

    def __init__(self) -> None:
        self.count = 0
        self.came = threading.Event()

    def __call__(self) -> None:
        self.count += 1
        self.came.set()


def test_work_due_sooner_than_the_lead_wakes_the_gpu_at_once() -> None:
    wakes = Wakes()
    wake = ClockWake(lead_s=1.0, wake=wakes)
    wake.expect_work_in(0.25)
    assert wakes.came.wait(DEADLINE_S)
    assert wake.woken.wait(DEADLINE_S) and wake.wakes == 1


def test_work_already_due_gets_no_wake() -> None:
    wakes = Wakes()
    wake = ClockWake(lead_s=1.0, wake=wakes)
    wake.expect_work_in(0.0)  # a worker catching up: the update starts now, the GPU is busy
    assert wake.plans == 0


def test_the_same_bar_asked_for_again_is_planned_once_and_a_new_bar_replaces_it() -> None:
    wakes = Wakes()
    wake = ClockWake(lead_s=1.0, wake=wakes)
    wake.expect_work_in(3600.0)  # a worker asks after each heartbeat while it waits
    wake.expect_work_in(3600.0)
    assert wake.plans == 1
    wake.expect_work_in(7200.0)
    assert wake.plans == 2
    wake.close()  # the worker stops: nothing is left planned, and no more is planned
    wake.expect_work_in(0.5)
    assert wake.plans == 2 and wakes.count == 0


def test_a_failing_wake_is_logged_once_and_stops_the_wakes() -> None:
    def broken() -> None:
        raise RuntimeError("no adapter")

    wake = ClockWake(lead_s=1.0, wake=broken)
    wake.expect_work_in(0.5)
    assert wake.stopped.wait(DEADLINE_S)
    wake.expect_work_in(5.0)  # another bar: nothing planned
    assert wake.plans == 1 and wake.wakes == 0


def test_one_wake_per_host_serves_every_worker_of_a_bar(tmp_path: Path) -> None:
    wakes, path = Wakes(), tmp_path / "gpu-wake"
    first, second = OncePerHost(wakes, path, recent_s=60.0), OncePerHost(wakes, path, 60.0)
    first()  # no wake on record: this worker opens the device
    second()  # another worker, same bar: done already
    assert (wakes.count, first.opened, second.opened) == (1, 1, 0)
    path.write_text(f"{time.time() - 61.0:.6f}")  # the last wake was a bar ago
    second()
    assert (wakes.count, second.opened) == (2, 1)


def test_a_wake_in_progress_elsewhere_is_not_repeated(tmp_path: Path) -> None:
    wakes, path = Wakes(), tmp_path / "gpu-wake"
    held = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # another process is opening its device now
        OncePerHost(wakes, path)()
        assert wakes.count == 0
    finally:
        os.close(held)
    OncePerHost(wakes, path)()  # free again, and no wake on record
    assert wakes.count == 1


def test_a_throwaway_device_is_freed_after_each_wake(gpu_device: Device) -> None:
    def live_devices() -> int:
        return sum(type(o).__name__ == "GPUDevice" for o in gc.get_objects())

    gc.collect()
    before = live_devices()
    open_close = ThrowawayDevice()
    for _ in range(12):
        open_close()
    assert live_devices() == before


def test_a_gpu_backend_wakes_its_clocks_and_a_cpu_adapter_does_not(gpu_device: Device) -> None:
    on_cpu = WgpuBackend(gpu_device, device_update=False)  # lavapipe: a CPU adapter
    assert gpu_device.info.adapter_type != "CPU" or on_cpu.clock_wake is None
    woken = WgpuBackend(gpu_device, device_update=False, wake_clocks=True)
    assert woken.clock_wake is not None
    fallback = FallbackBackend(lambda: woken, NumpyBackend())
    fallback.expect_work_in(0.5)  # due in less than the lead: the backend wakes it at once
    assert woken.clock_wake.woken.wait(DEADLINE_S)
    assert woken.clock_wake.wakes == 1
    fallback.expect_no_more_work()
    fallback.expect_work_in(0.5)
    assert woken.clock_wake.plans == 1
