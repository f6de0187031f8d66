"""posteriordb arK: y_t ~ N(alpha + sum_k beta_k y_{t-k}, sigma) for t > K.

theta = (alpha, beta_1..beta_K, log sigma). Priors alpha, beta ~ N(0, 10), sigma ~
Cauchy+(0, 2.5). A linear regression on lagged values, so the gradient is X^T r / sigma^2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from regime_model.types import FloatArray, LogDensityFn
from regime_model.validation.posteriordb.target import Target
from regime_model.validation.posteriordb.transforms import LOG_2PI, half_cauchy_log_sigma

COEF_SCALE, SIGMA_SCALE = 10.0, 2.5


def design(y: FloatArray, K: int) -> FloatArray:
    """[T - K, K + 1]: an intercept column, then y lagged by 1..K."""
    T = len(y)
    lags = [y[K - k : T - k] for k in range(1, K + 1)]
    return np.column_stack([np.ones(T - K), *lags])


def logdensity(y: FloatArray, K: int) -> LogDensityFn:
    X, target_y = design(y, K), y[K:]

    def fn(theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        coef, log_sigma = theta[:, : K + 1], theta[:, K + 1]
        inv_var = np.exp(-2.0 * log_sigma)
        resid = target_y[None, :] - coef @ X.T
        n = len(target_y)
        loglik = -0.5 * inv_var * (resid**2).sum(axis=1) - n * (log_sigma + 0.5 * LOG_2PI)
        lp_sigma, g_sigma = half_cauchy_log_sigma(log_sigma, SIGMA_SCALE)
        value = loglik - 0.5 * (coef**2).sum(axis=1) / COEF_SCALE**2 + lp_sigma
        g_coef = inv_var[:, None] * resid @ X - coef / COEF_SCALE**2
        g_log_sigma = inv_var * (resid**2).sum(axis=1) - n + g_sigma
        return value, np.column_stack([g_coef, g_log_sigma])

    return fn


def constrain_for(K: int) -> Any:
    def fn(theta: FloatArray) -> dict[str, FloatArray]:
        betas = {f"beta[{k}]": theta[..., k] for k in range(1, K + 1)}
        return {"alpha": theta[..., 0], **betas, "sigma": np.exp(theta[..., K + 1])}

    return fn


def target(data: Mapping[str, Any]) -> Target:
    K = int(data["K"])
    y = np.asarray(data["y"], dtype=np.float64)
    return Target(K + 2, logdensity(y, K), constrain_for(K))
