"""`backend = "auto"`: time both backends on the account's batch shape, keep the faster.

Below some number of lanes the dispatch tax makes the CPU win (WGPU.md); the crossover
depends on the adapter, so it is measured at start-up rather than guessed. What is timed
is a short warm update of the shape (`time_warm_update`), the work that repeats at every
bar: on a device it runs in one submission, so the tax is paid once per update, not once
per gradient. (Timing one gradient call, as `auto` did before, charged the device one
submission per gradient: on lavapipe it put wgpu at 0.7-3.1x numpy's speed from 4 to 64
lanes and picked numpy at 4, where the warm update runs about 5x faster on wgpu, as at
every count up to 64: docs/bench-results/auto_probe.py, nineteenth session.) The choice
and the figures are logged as `backend.selected`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import structlog

from gpu_backend.fallback import FallbackBackend
from regime_model.backend import Backend, UpdateBatch
from regime_model.batches import build_batch, prior_centre
from regime_model.carry import InstrumentCarry
from regime_model.params import check_states, n_params
from regime_model.spec import ModelSpec
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


# The probe's warm update: a few iterations of step-size re-adaptation and draws, enough to
# weigh a device's per-update cost (one submission, one read-back) against its per-iteration
# cost at the shape's lanes, and short enough that numpy's run of the trial shape (1,072
# lanes) stays within a few seconds of a worker's start.
PROBE_WARMUP = 2
PROBE_DRAWS = 6


def probe_batch(shape: BatchShape) -> UpdateBatch:
    """A warm batch of the shape's lanes (instruments of up to 4 chains, started near the
    priors' centre) and returns like `probe_inputs`', PROBE_WARMUP + PROBE_DRAWS long."""
    chains = math.gcd(shape.lanes, 4)
    spec = ModelSpec(n_states=shape.states, window=shape.window, chains=chains,
                     warmup_warm=PROBE_WARMUP, draws=PROBE_DRAWS)  # fmt: skip
    theta, y = probe_inputs(shape)
    centre = prior_centre(shape.states, spec.priors)
    starts = centre + 0.05 * theta  # chains apart, as a warm instrument's are
    n = shape.lanes // chains
    carries = [InstrumentCarry(x, np.full(chains, 0.2), np.ones(len(centre)))
               for x in starts.reshape(n, chains, -1)]  # fmt: skip
    batch, _ = build_batch(0.01 * y[::chains], carries, np.arange(n), 1, 0, spec)
    return batch


def time_warm_update(backend: Backend, shape: BatchShape, repeats: int = 2) -> float:
    """Fastest seconds of the probe's warm update (`probe_batch`): on a device, of
    `repeats` runs after an untimed one (pipelines, buffers); on the CPU, of one run, which
    has nothing to set up and is the dearer (3.4 s at the trial shape's 1,072 lanes)."""
    batch = probe_batch(shape)
    on_cpu = backend.adapter == "cpu"
    if not on_cpu:
        backend.run_update(batch)
    times = []
    for _ in range(1 if on_cpu else repeats):
        t0 = time.perf_counter()
        backend.run_update(batch)
        times.append(time.perf_counter() - t0)
    return min(times)


Timer = Callable[[Backend, BatchShape], float]


def select_auto(
    shape: BatchShape,
    gpu_factory: Callable[[], WgpuBackend],
    cpu: Backend,
    timer: Timer = time_warm_update,
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
        timed=getattr(timer, "__name__", "timer"),
        gpu_adapter=gpu.adapter,
    )
    return choice
