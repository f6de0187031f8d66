"""`backend = "auto"`: time both backends on the account's batch shape, keep the faster.

Below some number of lanes the dispatch tax makes the CPU win (WGPU.md); the crossover
depends on the adapter, so it is measured at start-up rather than guessed. The choice and
the figures are logged as `backend.selected`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import structlog

from gpu_backend.fallback import FallbackBackend
from regime_model.backend import Backend
from regime_model.params import check_states, n_params
from regime_model.types import Priors

if TYPE_CHECKING:  # typing only: the caller imports wgpu when it asks for the GPU
    from gpu_backend.wgpu_backend import WgpuBackend

log = structlog.get_logger("gpu_backend.selection")


class BatchShape(NamedTuple):
    lanes: int  # instruments x chains of one update
    window: int  # T
    states: int  # K

    def check(self) -> None:
        check_states(self.states)
        if self.lanes < 1 or self.window < 1:
            raise ValueError(f"a batch needs lanes >= 1 and window >= 1, got {self}")


def probe_inputs(shape: BatchShape, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Representative theta [L, D] and scaled returns y [L, T] for timing."""
    rng = np.random.default_rng(seed)
    theta = 0.3 * rng.standard_normal((shape.lanes, n_params(shape.states)))
    y = rng.standard_t(5, size=(shape.lanes, shape.window))
    return theta, y


def time_value_and_grad(backend: Backend, shape: BatchShape, repeats: int = 3) -> float:
    """Median seconds of one batched value-and-gradient call (after one warm-up call)."""
    theta, y = probe_inputs(shape)
    priors = Priors()
    backend.hmm_value_and_grad(theta, y, shape.states, priors)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        backend.hmm_value_and_grad(theta, y, shape.states, priors)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


Timer = Callable[[Backend, BatchShape], float]


def select_auto(
    shape: BatchShape,
    gpu_factory: Callable[[], WgpuBackend],
    cpu: Backend,
    timer: Timer = time_value_and_grad,
) -> Backend:
    """The faster of the GPU (behind its numpy fallback) and the CPU for `shape`."""
    shape.check()
    gpu = FallbackBackend(gpu_factory, cpu)
    cpu_s = timer(cpu, shape)
    if gpu.gpu is None:
        log.info("backend.selected", choice=cpu.name, reason="no usable GPU", cpu_ms=cpu_s * 1e3)
        return cpu
    gpu_s = timer(gpu, shape)
    choice: Backend = gpu if gpu_s < cpu_s and gpu.fallbacks == 0 else cpu
    log.info(
        "backend.selected",
        choice=choice.name,
        adapter=choice.adapter,
        numerics=choice.numerics,
        lanes=shape.lanes,
        window=shape.window,
        states=shape.states,
        cpu_ms=round(cpu_s * 1e3, 3),
        gpu_ms=round(gpu_s * 1e3, 3),
        gpu_adapter=gpu.adapter,
    )
    return choice
