"""Implementations of regime_model's Backend: a registry and the one place that picks one."""

from __future__ import annotations

from collections.abc import Callable

import structlog

from gpu_backend.fallback import FallbackBackend
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.selection import BatchShape, select_auto
from regime_model.backend import Backend

__all__ = [
    "BACKENDS",
    "BatchShape",
    "FallbackBackend",
    "NumpyBackend",
    "select_backend",
]

log = structlog.get_logger("gpu_backend")


def wgpu_with_fallback() -> Backend:
    """The wgpu backend behind its numpy fallback: a missing or failing GPU never stops work."""
    from gpu_backend.wgpu_backend import WgpuBackend  # noqa: PLC0415 - imports wgpu

    return FallbackBackend(WgpuBackend, NumpyBackend())


BACKENDS: dict[str, Callable[[], Backend]] = {"numpy": NumpyBackend, "wgpu": wgpu_with_fallback}


def select_backend(name: str, shape: BatchShape | None = None) -> Backend:
    """The backend registered under `name`; "auto" times wgpu and numpy on `shape`.

    "auto" without a shape has nothing to measure and keeps the numpy reference.
    """
    if name == "auto":
        if shape is None:
            log.info("backend.selected", choice="numpy", reason="auto without a batch shape")
            return NumpyBackend()
        from gpu_backend.wgpu_backend import WgpuBackend  # noqa: PLC0415 - imports wgpu

        return select_auto(shape, WgpuBackend, NumpyBackend())
    factory = BACKENDS.get(name)
    if factory is None:
        choices = ", ".join(sorted([*BACKENDS, "auto"]))
        raise ValueError(f"unknown backend {name!r}; valid choices: {choices}")
    return factory()
