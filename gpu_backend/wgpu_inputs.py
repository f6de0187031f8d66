"""What the wgpu kernels take and leave out: the windows as they read them, and the log
density's constant terms the host adds to what they return. The inputs' check, which
every backend runs, is gpu_backend.kernel_inputs."""

from __future__ import annotations

import math

import numpy as np

from regime_model.types import FloatArray, Priors

HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def time_major(y: FloatArray, lo: int, hi: int, per_row: int) -> np.ndarray:
    """Lanes [lo, hi) of y as the kernels read it, [T, hi - lo] float32, lane l reading row
    l // per_row: the rows are converted and transposed once, then repeated (a run's 40
    draws per chain took an 88 MB float64 repeat of the window at 268 instruments)."""
    first, last = lo // per_row, -(-hi // per_row)
    rows = y[first:last].T.astype(np.float32)
    if per_row > 1:
        rows = np.repeat(rows, per_row, axis=1)[:, lo - first * per_row : hi - first * per_row]
    return np.ascontiguousarray(rows)


def constant_terms(K: int, T: int, priors: Priors) -> float:
    """What the kernels leave out: -T/2 log 2pi and the normal priors' normalisers."""
    normal = (
        K * -math.log(priors.mu_scale)
        - math.log(priors.log_sigma_scale)
        + (K - 1) * -math.log(priors.eta_scale)
        - 2 * K * HALF_LOG_2PI
    )
    return normal - T * HALF_LOG_2PI
