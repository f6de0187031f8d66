"""posteriordb arma11: err_t = y_t - mu - phi y_{t-1} - theta err_{t-1} ~ N(0, sigma),
with nu_1 = mu + phi mu (err_0 = 0).

theta = (mu, phi, theta_ma, log sigma). Priors mu ~ N(0, 10), phi, theta_ma ~ N(0, 2),
sigma ~ Cauchy+(0, 2.5). err is a linear recurrence with coefficient -theta_ma.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from regime_model.types import FloatArray, LogDensityFn
from regime_model.validation.posteriordb import recurrence
from regime_model.validation.posteriordb.target import Target
from regime_model.validation.posteriordb.transforms import LOG_2PI, half_cauchy_log_sigma

DIM = 4
MU_SCALE, COEF_SCALE, SIGMA_SCALE = 10.0, 2.0, 2.5


def _drive(y: FloatArray, mu: FloatArray, phi: FloatArray) -> FloatArray:
    """r_t = y_t - mu - phi y_{t-1}, r_1 = y_1 - mu (1 + phi): err with theta_ma = 0."""
    lagged = np.concatenate([[0.0], y[:-1]])
    r: FloatArray = y[None, :] - mu[:, None] - phi[:, None] * lagged[None, :]
    r[:, 0] -= phi * mu
    return r


def logdensity(y: FloatArray) -> LogDensityFn:
    def fn(theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        mu, phi, ma, log_sigma = theta.T
        err = recurrence.forward(-ma, _drive(y, mu, phi))
        inv_var = np.exp(-2.0 * log_sigma)
        sq = (err**2).sum(axis=1)
        lam = recurrence.backward(-ma, -err * inv_var[:, None])
        g_mu = -lam.sum(axis=1) - lam[:, 0] * phi
        g_phi = -(lam[:, 1:] * y[None, :-1]).sum(axis=1) - lam[:, 0] * mu
        g_ma = -(lam[:, 1:] * err[:, :-1]).sum(axis=1)
        lp_sigma, g_sigma = half_cauchy_log_sigma(log_sigma, SIGMA_SCALE)
        prior = -0.5 * (mu / MU_SCALE) ** 2 - 0.5 * (phi**2 + ma**2) / COEF_SCALE**2
        value = -0.5 * inv_var * sq - len(y) * (log_sigma + 0.5 * LOG_2PI) + prior + lp_sigma
        grad = [
            g_mu - mu / MU_SCALE**2,
            g_phi - phi / COEF_SCALE**2,
            g_ma - ma / COEF_SCALE**2,
            inv_var * sq - len(y) + g_sigma,
        ]
        return value, np.column_stack(grad)

    return fn


def constrain(theta: FloatArray) -> dict[str, FloatArray]:
    return {
        "mu": theta[..., 0],
        "phi": theta[..., 1],
        "theta": theta[..., 2],
        "sigma": np.exp(theta[..., 3]),
    }


def target(data: Mapping[str, Any]) -> Target:
    return Target(DIM, logdensity(np.asarray(data["y"], dtype=np.float64)), constrain)
