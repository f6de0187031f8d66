"""What the HMM kernels take and leave out: validated inputs, and the log density's
constant terms the host adds to what they return."""

from __future__ import annotations

import math

import numpy as np

from regime_model.params import check_states, n_params
from regime_model.types import FloatArray, Priors

HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def validate(theta: FloatArray, y: FloatArray, K: int) -> tuple[FloatArray, FloatArray]:
    """theta [L, D(K)] and y [L, T] as float64, or ValueError naming what is wrong."""
    check_states(K)
    theta, y = np.asarray(theta, dtype=np.float64), np.asarray(y, dtype=np.float64)
    D = n_params(K)
    if theta.ndim != 2 or theta.shape[1] != D:
        raise ValueError(f"theta must be [L, {D}] for K={K}, got shape {theta.shape}")
    if y.ndim != 2 or y.shape[0] != theta.shape[0] or y.shape[1] < 1:
        raise ValueError(f"y must be [L={theta.shape[0]}, T>=1], got shape {y.shape}")
    return theta, y


def constant_terms(K: int, T: int, priors: Priors) -> float:
    """What the kernels leave out: -T/2 log 2pi and the normal priors' normalisers."""
    normal = (
        K * -math.log(priors.mu_scale)
        - math.log(priors.log_sigma_scale)
        + (K - 1) * -math.log(priors.eta_scale)
        - 2 * K * HALF_LOG_2PI
    )
    return normal - T * HALF_LOG_2PI
