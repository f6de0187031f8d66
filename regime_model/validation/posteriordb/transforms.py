"""Stan's constraining transforms for the ported models, with log-Jacobians.

Each function maps unconstrained columns [L] to constrained values and returns what the
chain rule needs; the sampler never sees a constrained coordinate.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model.types import FloatArray

LOG_2PI = float(np.log(2 * np.pi))


class Ordered2(NamedTuple):
    """x1 = a (or exp(a) when positive), x2 = x1 + exp(b)."""

    x1: FloatArray  # [L]
    x2: FloatArray  # [L]
    dx1_da: FloatArray  # [L]; dx2/da equals it
    dx2_db: FloatArray  # [L]
    log_jacobian: FloatArray  # [L]; d/da = 1 if positive else 0, d/db = 1


def ordered2(a: FloatArray, b: FloatArray, positive: bool) -> Ordered2:
    x1 = np.exp(a) if positive else a
    gap = np.exp(b)
    log_jac = a + b if positive else b
    return Ordered2(x1, x1 + gap, x1 if positive else np.ones_like(a), gap, log_jac)


def sigmoid(x: FloatArray) -> FloatArray:
    out: FloatArray = np.exp(-np.logaddexp(0.0, -x))
    return out


def log_sigmoid(x: FloatArray) -> FloatArray:
    out: FloatArray = -np.logaddexp(0.0, -x)
    return out


def normal_lpdf(x: FloatArray, loc: float | FloatArray, scale: float) -> FloatArray:
    z = (x - loc) / scale
    out: FloatArray = -0.5 * z**2 - np.log(scale) - 0.5 * LOG_2PI
    return out


def half_cauchy_log_sigma(u: FloatArray, scale: float) -> tuple[FloatArray, FloatArray]:
    """log Cauchy+(sigma | 0, scale) + log-Jacobian for sigma = exp(u), and its d/du.

    Up to a constant: -log(1 + (sigma/scale)^2) + u.
    """
    r2 = np.exp(2.0 * u) / scale**2
    return -np.log1p(r2) + u, 1.0 - 2.0 * r2 / (1.0 + r2)
