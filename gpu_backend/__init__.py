"""Where the batched numerics run: a registry of backends and the one place that picks one."""

from __future__ import annotations

from collections.abc import Callable

from gpu_backend.base import Backend, PredictiveBatch
from gpu_backend.numpy_backend import NumpyBackend

__all__ = ["BACKENDS", "Backend", "NumpyBackend", "PredictiveBatch", "select_backend"]

BACKENDS: dict[str, Callable[[], Backend]] = {"numpy": NumpyBackend}


def select_backend(name: str) -> Backend:
    """The backend registered under `name`; "auto" picks the best available.

    "auto" is numpy for now: the wgpu backend, and the start-up measurement that chooses
    between it and numpy, land in their own issue.
    """
    if name == "auto":
        return NumpyBackend()
    factory = BACKENDS.get(name)
    if factory is None:
        choices = ", ".join(sorted([*BACKENDS, "auto"]))
        raise ValueError(f"unknown backend {name!r}; valid choices: {choices}")
    return factory()
