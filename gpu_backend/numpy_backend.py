"""The float64 numpy reference backend: regime_model's pure functions, run on the CPU."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from gpu_backend.kernel_inputs import validate
from regime_model.backend import PredictiveBatch, UpdateBatch, run_on_host
from regime_model.hmc import host_leapfrog
from regime_model.posterior import log_density_and_grad, predictive, predictive_and_likelihood
from regime_model.sampler import SampleResult
from regime_model.types import FloatArray, IntArray, Priors, Trajectory

# glibc mallopt parameters.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 32 << 20  # glibc's ceiling for this parameter
_TRIM_THRESHOLD = 512 << 20


def tune_allocator() -> bool:
    """Keep numpy's 0.1-30 MB temporaries on the heap instead of fresh mmaps (glibc only).

    The scan allocates and frees temporaries of this size dozens of times per gradient. By
    default glibc serves them with mmap or trims the heap after each free, so every one
    page-faults anew: measured 3x slower value-and-grad at 32 lanes, 2x at 1072. Raising
    the thresholds keeps the memory mapped between calls (the process keeps its peak heap).
    Process-wide and idempotent; returns whether it applied.
    """
    if not sys.platform.startswith("linux"):
        return False
    path = ctypes.util.find_library("c")
    if path is None:
        return False
    mallopt = getattr(ctypes.CDLL(path), "mallopt", None)  # absent on musl
    if mallopt is None:
        return False
    ok_mmap = mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
    ok_trim = mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
    return bool(ok_mmap and ok_trim)


@dataclass(frozen=True)
class NumpyBackend:
    name: str = "numpy"
    adapter: str = "cpu"
    numerics: str = "float64"
    allocator_tuned: bool = field(default_factory=tune_allocator)

    def hmm_value_and_grad(
        self, theta: FloatArray, y: FloatArray, n_states: int, priors: Priors
    ) -> tuple[FloatArray, FloatArray]:
        return log_density_and_grad(theta, y, n_states, priors)

    def hmm_predictive(
        self, theta: FloatArray, y: FloatArray, n_states: int, draws_per_row: int = 1
    ) -> PredictiveBatch:
        if draws_per_row > 1:
            y = np.repeat(y, draws_per_row, axis=0)
        return PredictiveBatch(*predictive(theta, y, n_states))

    def hmm_predictive_and_likelihood(
        self, theta: FloatArray, y: FloatArray, n_states: int, draws_per_row: int = 1
    ) -> tuple[PredictiveBatch, FloatArray]:
        theta, y = validate(theta, y, n_states, draws_per_row)
        pred, loglik = predictive_and_likelihood(theta, y, n_states, draws_per_row)
        return PredictiveBatch(*pred), loglik

    def leapfrog(
        self,
        theta: FloatArray,
        momentum: FloatArray,
        grad: FloatArray,
        step_size: FloatArray,
        inv_mass: FloatArray,
        lane_steps: IntArray,
        y: FloatArray,
        n_states: int,
        priors: Priors,
    ) -> Trajectory:
        """The host loop over this backend's value-and-gradient: the reference trajectory."""
        fn = partial(self.hmm_value_and_grad, y=y, n_states=n_states, priors=priors)
        return host_leapfrog(fn, theta, momentum, grad, step_size, inv_mass, lane_steps)

    def run_update(self, batch: UpdateBatch) -> SampleResult:
        return run_on_host(self, batch)
