"""posteriordb garch11: y_t ~ N(mu, sigma_t), sigma_t^2 = alpha0 + alpha1 (y_{t-1} - mu)^2
+ beta1 sigma_{t-1}^2, sigma_1 given; flat priors on the constrained parameters.

theta = (mu, a, b, c): alpha0 = exp(a), alpha1 = sigmoid(b), beta1 = (1 - alpha1) sigmoid(c)
(Stan's lower/upper transform with beta1's upper bound 1 - alpha1). The variance path is
a linear recurrence in sigma^2 with coefficient beta1; its adjoint gives the gradient.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from regime_model.types import FloatArray, LogDensityFn
from regime_model.validation.posteriordb import recurrence
from regime_model.validation.posteriordb.target import Target
from regime_model.validation.posteriordb.transforms import LOG_2PI, log_sigmoid, sigmoid

DIM = 4


class _Params(NamedTuple):
    alpha0: FloatArray
    alpha1: FloatArray
    beta1: FloatArray
    log_jacobian: FloatArray


def _params(theta: FloatArray) -> _Params:
    a, b, c = theta[..., 1], theta[..., 2], theta[..., 3]
    alpha1 = sigmoid(b)
    log_jac = a + log_sigmoid(b) + 2.0 * log_sigmoid(-b) + log_sigmoid(c) + log_sigmoid(-c)
    return _Params(np.exp(a), alpha1, (1.0 - alpha1) * sigmoid(c), log_jac)


def _chain(
    theta: FloatArray, p: _Params, g: tuple[FloatArray, FloatArray, FloatArray]
) -> list[FloatArray]:
    """Pull d/d(alpha0, alpha1, beta1) back to (a, b, c), Jacobian terms included."""
    b, c = theta[:, 2], theta[:, 3]
    sb, sc = sigmoid(b), sigmoid(c)
    d_alpha1 = sb * (1.0 - sb)
    g_a = g[0] * p.alpha0 + 1.0
    g_b = g[1] * d_alpha1 - g[2] * d_alpha1 * sc + (1.0 - sb) - 2.0 * sb
    g_c = g[2] * (1.0 - p.alpha1) * sc * (1.0 - sc) + (1.0 - sc) - sc
    return [g_a, g_b, g_c]


def logdensity(y: FloatArray, sigma1: float) -> LogDensityFn:
    def fn(theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        mu, p = theta[:, 0:1], _params(theta)
        dev = y[None, :] - mu
        drive = np.empty_like(dev)
        drive[:, 0] = sigma1**2
        drive[:, 1:] = p.alpha0[:, None] + p.alpha1[:, None] * dev[:, :-1] ** 2
        var = recurrence.forward(p.beta1, drive)
        value = (-0.5 * (LOG_2PI + np.log(var) + dev**2 / var)).sum(axis=1)
        lam = recurrence.backward(p.beta1, 0.5 * (dev**2 / var - 1.0) / var)[:, 1:]
        g_mu = (dev / var).sum(axis=1) - 2.0 * p.alpha1 * (lam * dev[:, :-1]).sum(axis=1)
        g_pars = (
            lam.sum(axis=1),
            (lam * dev[:, :-1] ** 2).sum(axis=1),
            (lam * var[:, :-1]).sum(axis=1),
        )
        return value + p.log_jacobian, np.column_stack([g_mu, *_chain(theta, p, g_pars)])

    return fn


def constrain(theta: FloatArray) -> dict[str, FloatArray]:
    p = _params(theta)
    return {"mu": theta[..., 0], "alpha0": p.alpha0, "alpha1": p.alpha1, "beta1": p.beta1}


def target(data: Mapping[str, Any]) -> Target:
    y = np.asarray(data["y"], dtype=np.float64)
    return Target(DIM, logdensity(y, float(data["sigma1"])), constrain)
