"""Raises an idle GPU's clocks just before work comes: a throwaway device, opened and
closed `WAKE_LEAD_S` ahead of the work, on a timer thread.

Why: an NVIDIA GPU that idles between bars drops its SM clock (345 MHz against 1,980 under
load on the H200), and a paced warm update of 54 instruments then takes 27 ms of device
time instead of 6.3. The clocks rise too slowly under the update's own load, under a busy
kernel just before it, or under a pulse that keeps the GPU 40 % busy (555 MHz at best).
What the driver does raise them for, at once and for about 4 s, is a new device (a new
context): opening one 0.1 or 0.5 s before the update ran it at 1,980 MHz in 6.3 ms
(docs/benchmarks.md, "Waking the GPU's clocks before a bar"). Opening one costs about
90 ms of a host thread and nothing on the GPU.

A CPU adapter (lavapipe) has no clocks to raise; the backend wakes only a GPU's. The
clocks are the GPU's, not a process's: of the workers of one host, which wake for the same
bar at the same moment, one opens the device and the others find it done (`OncePerHost`).
"""

from __future__ import annotations

import fcntl
import gc
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

log = structlog.get_logger("gpu_backend.clock_wake")

# Ahead of the work: more than opening a device takes (about 90 ms on the H200 host, more
# while several workers open theirs), well inside the ~4 s the clocks then stay up.
WAKE_LEAD_S = 1.0
# Calls within this of an already planned wake are for the same work (a worker asks
# again after each heartbeat while it waits for the same bar).
_SAME_WORK_S = 0.1
# Work due sooner than this gets no wake: the device would open after the work began (a
# worker catching up on missed bars, back to back, whose GPU is not idle anyway).
TOO_LATE_S = 0.2


class ThrowawayDevice:
    """Opens a device on the high-performance adapter (found once) and releases it at once."""

    def __init__(self) -> None:
        self._adapter: Any = None

    def __call__(self) -> None:
        import wgpu  # noqa: PLC0415 - only where a GPU runs

        if self._adapter is None:
            self._adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
            if self._adapter is None:
                raise RuntimeError("no wgpu adapter found")
        device = self._adapter.request_device_sync()
        device.destroy()
        del device
        # A device and its queue refer to each other: collect the young generations now,
        # so that a wake per bar never leaves its device to a full collection.
        gc.collect(1)


# One file per user and host: whoever holds its lock is waking the GPU; it keeps the wall
# time of the last wake. Within RECENT_S of one (less than the ~4 s the clocks then stay
# up, more than the workers of one bar are apart) there is nothing to do.
HOST_WAKE_FILE = Path(tempfile.gettempdir()) / f"regime-trader-gpu-wake-{os.getuid()}"
RECENT_S = 2.0


class OncePerHost:
    """`wake` unless another process of this host is doing it or did it within `recent_s`.

    Without it, 80 workers of one host (docs/scaling.md) would each open a device at every
    bar: 80 x 90 ms of host time and 80 contexts' memory on the GPU at once, for one wake."""

    def __init__(
        self, wake: Callable[[], Any], path: Path = HOST_WAKE_FILE, recent_s: float = RECENT_S
    ) -> None:
        self._wake, self.path, self.recent_s = wake, path, recent_s
        self.opened = 0  # wakes this process did itself

    def __call__(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return  # another worker is waking the GPU now
            last = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            try:
                recent = time.time() - float(last) < self.recent_s
            except ValueError:  # a new (empty) or damaged file: no wake on record
                recent = False
            if recent:
                return
            self._wake()
            stamp = f"{time.time():.6f}".encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, stamp, 0)
            self.opened += 1
        finally:
            os.close(fd)  # and with it the lock


class ClockWake:
    """`expect_work_in(seconds)`: wake the GPU `lead_s` before then (at once if sooner)."""

    def __init__(self, lead_s: float = WAKE_LEAD_S, wake: Callable[[], Any] | None = None) -> None:
        self.lead_s = lead_s
        self._wake = wake if wake is not None else OncePerHost(ThrowawayDevice())
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._due: float | None = None  # monotonic time of the work the last plan was for
        self._ended = False  # closed, or a wake failed: nothing more is planned
        self.plans = 0  # wakes planned (one per bar's work)
        self.wakes = 0
        self.woken = threading.Event()  # set after each wake
        self.stopped = threading.Event()  # set once a wake failed: no more are planned

    def expect_work_in(self, seconds: float) -> None:
        """Plan a wake for work due in `seconds`: none if it is due within TOO_LATE_S, one
        for the same work asked for again, a new one (replacing the plan) for other work."""
        if seconds < TOO_LATE_S:
            return
        due = time.monotonic() + seconds
        with self._lock:
            if self._ended or (self._due is not None and abs(due - self._due) < _SAME_WORK_S):
                return
            if self._timer is not None:
                self._timer.cancel()  # planned for other work: this comes first
            self._due = due
            self.plans += 1
            self._timer = threading.Timer(max(0.0, seconds - self.lead_s), self._run)
            self._timer.daemon = True
            self._timer.name = "gpu-clock-wake"
            self._timer.start()

    def close(self) -> None:
        """No more wakes; one in progress is waited for (its device released before the
        process tears wgpu down)."""
        with self._lock:
            self._ended, timer, self._timer = True, self._timer, None
        if timer is not None:
            timer.cancel()
            timer.join()

    def _run(self) -> None:
        try:
            self._wake()
        except Exception as error:  # a wake is an optimisation, never the update's fault
            with self._lock:
                self._ended = True
            self.stopped.set()
            log.warning("gpu.clock_wake_failed", error=str(error),
                        next="no more wakes: paced updates run at idle clocks")  # fmt: skip
            return
        self.wakes += 1
        self.woken.set()
