"""The check every backend runs on a kernel call's inputs, before any work: shapes that
do not fit fail here, naming what was wrong, not deep in a kernel."""

from __future__ import annotations

import numpy as np

from regime_model.params import check_states, n_params
from regime_model.types import FloatArray


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
