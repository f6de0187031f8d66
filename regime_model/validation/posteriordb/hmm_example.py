"""posteriordb hmm_example: 2-state HMM, unit-sd Gaussian emissions, positive_ordered mu.

theta = (a, b, u0, u1): mu1 = exp(a), mu2 = mu1 + exp(b); u the transition coordinates of
`hmm_core`. Priors: mu1 ~ N(3, 1), mu2 ~ N(10, 1), rows uniform on the simplex.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from regime_model.types import FloatArray, LogDensityFn
from regime_model.validation.posteriordb.hmm_core import hmm_terms, simplex_rows
from regime_model.validation.posteriordb.target import Target
from regime_model.validation.posteriordb.transforms import normal_lpdf, ordered2

DIM = 4
PRIOR_LOC = (3.0, 10.0)


def logdensity(y: FloatArray) -> LogDensityFn:
    def fn(theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        mu = ordered2(theta[:, 0], theta[:, 1], positive=True)
        means = np.stack([mu.x1, mu.x2])  # [K, L]
        resid = y[None, None, :] - means[:, :, None]  # [K, L, T]
        log_e = -0.5 * resid**2 - 0.5 * np.log(2 * np.pi)
        hmm = hmm_terms(log_e, [resid], theta[:, 2:], np.ones((2, 2)))
        lp1, lp2 = normal_lpdf(mu.x1, PRIOR_LOC[0], 1.0), normal_lpdf(mu.x2, PRIOR_LOC[1], 1.0)
        g_mu = hmm.emission_grads[0] - np.stack([mu.x1 - PRIOR_LOC[0], mu.x2 - PRIOR_LOC[1]], 1)
        g_a = (g_mu[:, 0] + g_mu[:, 1]) * mu.dx1_da + 1.0
        g_b = g_mu[:, 1] * mu.dx2_db + 1.0
        value = hmm.value + lp1 + lp2 + mu.log_jacobian
        return value, np.column_stack([g_a, g_b, hmm.logit_grad])

    return fn


def constrain(theta: FloatArray) -> dict[str, FloatArray]:
    mu = ordered2(theta[..., 0], theta[..., 1], positive=True)
    return {**simplex_rows(theta[..., 2:]), "mu[1]": mu.x1, "mu[2]": mu.x2}


def target(data: Mapping[str, Any]) -> Target:
    return Target(DIM, logdensity(np.asarray(data["y"], dtype=np.float64)), constrain)
