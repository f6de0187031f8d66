"""One wgpu device per process: the adapter found, what it offers, and errors made visible.

Create it in the process that uses it (workers are spawned, never forked after wgpu is
initialised: the child hangs, WGPU.md). Asynchronous GPU errors only reach the `wgpu`
logger; `ErrorLog` collects them so a call can fail loudly instead of returning garbage.
Before the first adapter request the process gets an XDG_RUNTIME_DIR if it has none
(`ensure_runtime_dir`): the drivers print an error without one.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import tempfile
from collections.abc import MutableMapping
from dataclasses import dataclass, field, replace
from typing import Any

import structlog

from gpu_backend.device_traffic import CountingDevice
from gpu_backend.subgroup_size import measure_subgroup_size

log = structlog.get_logger("gpu_backend.wgpu_device")

WANTED_FEATURES = ("shader-f64", "timestamp-query", "subgroup")
# The one-dispatch sampler binds 13 storage buffers (shaders/lane_sampler.py), above
# WebGPU's default of 8 per stage, and the wide run summary's workgroup needs 29.7 KB,
# above its 16 KB (gpu_backend/run_summary.py): ask for what the adapter has.
_LIMITS = (
    "max-storage-buffer-binding-size", "max-buffer-size", "max-storage-buffers-per-shader-stage",
    "max-compute-workgroup-storage-size",
)


class GpuUnavailableError(RuntimeError):
    """No usable adapter or device: fall back to the CPU."""


class GpuCallError(RuntimeError):
    """A GPU call failed (validation, device lost, injected fault): redo it on the CPU."""


@dataclass(frozen=True)
class DeviceInfo:
    adapter: str  # e.g. "llvmpipe (LLVM 15.0.6, 256 bits)", "NVIDIA H200"
    driver: str
    backend: str  # Vulkan, Metal, D3D12
    adapter_type: str  # CPU, DiscreteGPU, ...
    features: frozenset[str]
    max_binding: int  # bytes one storage binding may span
    max_buffer: int
    subgroup_size: int = 0  # threads per subgroup, measured (subgroup_size.py); 0: none


@dataclass
class ErrorLog(logging.Handler):
    """Records errors wgpu reports only through logging (uncaptured, asynchronous)."""

    messages: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        logging.Handler.__init__(self, logging.ERROR)

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def take(self) -> list[str]:
        taken, self.messages = self.messages, []
        return taken

    def __hash__(self) -> int:
        return id(self)


@dataclass(frozen=True)
class Device:
    handle: Any  # wgpu.GPUDevice
    info: DeviceInfo
    errors: ErrorLog

    def check(self) -> None:
        """Raise GpuCallError if wgpu logged an error since the last check."""
        problems = self.errors.take()
        if problems:
            raise GpuCallError("; ".join(problems[:3]))


def _info(adapter: Any, features: frozenset[str]) -> DeviceInfo:
    info = adapter.info
    return DeviceInfo(
        adapter=str(info.get("device", "") or info.get("description", "unknown")),
        driver=str(info.get("description", "")),
        backend=str(info.get("backend_type", "")),
        adapter_type=str(info.get("adapter_type", "")),
        features=features,
        max_binding=int(adapter.limits["max-storage-buffer-binding-size"]),
        max_buffer=int(adapter.limits["max-buffer-size"]),
    )


def ensure_runtime_dir(env: MutableMapping[str, str]) -> str | None:
    """Set XDG_RUNTIME_DIR in `env` when it is unset or empty; the directory set, or None.

    Mesa's Vulkan device-select layer asks libwayland for a display while the adapters are
    enumerated, and libwayland prints "error: XDG_RUNTIME_DIR is invalid or not set in the
    environment." when there is none (a systemd service without RuntimeDirectory=, cron, a
    container). A value already there is the user's and is kept; systemd's
    $RUNTIME_DIRECTORY is taken when there is one, else a new private (0700) folder, removed
    at exit if still empty."""
    if env.get("XDG_RUNTIME_DIR"):
        return None
    runtime = env.get("RUNTIME_DIRECTORY", "").split(":")[0] or _private_dir()
    if runtime:
        env["XDG_RUNTIME_DIR"] = runtime
    return runtime or None


def _private_dir() -> str:
    try:
        made = tempfile.mkdtemp(prefix="regime-trader-runtime-")
    except OSError:  # no writable temporary folder: the drivers' complaint is only noise
        return ""
    atexit.register(_remove_if_empty, made)
    return made


def _remove_if_empty(path: str) -> None:
    with contextlib.suppress(OSError):  # something put a file there, or it is gone: leave it
        os.rmdir(path)


def open_device() -> Device:
    """The best adapter's device with the features we use; GpuUnavailableError if there is none."""
    ensure_runtime_dir(os.environ)  # before the Vulkan loader reads it
    try:
        import wgpu  # noqa: PLC0415 - heavy; only processes that use the GPU pay for it

        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        if adapter is None:
            raise GpuUnavailableError("no wgpu adapter found")
        features = frozenset(f for f in WANTED_FEATURES if f in adapter.features)
        limits = {name: adapter.limits[name] for name in _LIMITS}
        handle = adapter.request_device_sync(
            required_features=sorted(features), required_limits=limits
        )
    except (RuntimeError, OSError) as error:  # wgpu raises RuntimeError with no adapter
        raise GpuUnavailableError(f"no usable wgpu adapter: {error}") from error
    errors = ErrorLog()
    logging.getLogger("wgpu").addHandler(errors)
    threads = measure_subgroup_size(handle) if "subgroup" in features else 0
    info = replace(_info(adapter, features), subgroup_size=threads)
    log.info(
        "gpu.device",
        **{k: v for k, v in vars(info).items() if k != "features"},
        features=sorted(features),
        limits=limits,
    )
    # counted at the queue: submissions and uploads per update (device_traffic.py)
    return Device(CountingDevice(handle), info, errors)
