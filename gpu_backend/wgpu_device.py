"""One wgpu device per process: the adapter found, what it offers, and errors made visible.

Create it in the process that uses it (workers are spawned, never forked after wgpu is
initialised: the child hangs, WGPU.md). Asynchronous GPU errors only reach the `wgpu`
logger; `ErrorLog` collects them so a call can fail loudly instead of returning garbage.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import structlog

from gpu_backend.device_traffic import CountingDevice

log = structlog.get_logger("gpu_backend.wgpu_device")

WANTED_FEATURES = ("shader-f64", "timestamp-query")
_LIMITS = ("max-storage-buffer-binding-size", "max-buffer-size")


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


def open_device() -> Device:
    """The best adapter's device with the features we use; GpuUnavailableError if there is none."""
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
    info = _info(adapter, features)
    log.info(
        "gpu.device",
        **{k: v for k, v in vars(info).items() if k != "features"},
        features=sorted(features),
        limits=limits,
    )
    # counted at the queue: submissions and uploads per update (device_traffic.py)
    return Device(CountingDevice(handle), info, errors)
