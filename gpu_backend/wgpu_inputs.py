"""What the HMM kernels take and leave out: validated inputs, and the log density's
constant terms the host adds to what they return."""

from __future__ import annotations

import math

import numpy as np

from regime_model.params import check_states, n_params
from regime_model.types import FloatArray, Priors

HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def validate(
    theta: FloatArray, y: FloatArray, K: int, per_row: int = 1
) -> tuple[FloatArray, FloatArray]:
    """theta [L, D(K)] and y [L / per_row, T] as float64, or ValueError naming what is
    wrong."""
    check_states(K)
    theta, y = np.asarray(theta, dtype=np.float64), np.asarray(y, dtype=np.float64)
    D = n_params(K)
    if theta.ndim != 2 or theta.shape[1] != D:
        raise ValueError(f"theta must be [L, {D}] for K={K}, got shape {theta.shape}")
    if per_row < 1 or y.ndim != 2 or y.shape[0] * per_row != theta.shape[0] or y.shape[1] < 1:
        raise ValueError(f"y must be [L={theta.shape[0]} / {per_row} lanes a row, T>=1], "
                         f"got shape {y.shape}")  # fmt: skip
    return theta, y


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
