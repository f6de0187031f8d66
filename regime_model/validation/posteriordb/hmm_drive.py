"""posteriordb hmm_drive_1 (Gaussian emissions, ordered) and hmm_drive_0 (exponential
emissions, positive_ordered): two emission streams u, v; phi and lambda per state.

theta = (phi_a, phi_b, lambda_a, lambda_b, u0, u1). Priors: phi1, lambda1 ~ N(0, 1),
phi2, lambda2 ~ N(3, 1), rows Dirichlet(alpha) from the data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np

from regime_model.types import FloatArray, LogDensityFn
from regime_model.validation.posteriordb.hmm_core import hmm_terms, simplex_rows
from regime_model.validation.posteriordb.target import Target
from regime_model.validation.posteriordb.transforms import LOG_2PI, Ordered2, normal_lpdf, ordered2

DIM = 6
PRIOR_LOC = np.array([0.0, 3.0])

# (observations [T], state parameters [K, L]) -> (log e [K, L, T], d log e / d parameter)
Emission = Callable[[FloatArray, FloatArray], tuple[FloatArray, FloatArray]]


class _Stream(NamedTuple):
    obs: FloatArray
    emission: Emission


def normal_emission(sd: float) -> Emission:
    def fn(x: FloatArray, loc: FloatArray) -> tuple[FloatArray, FloatArray]:
        z = (x[None, None, :] - loc[:, :, None]) / sd
        return -0.5 * z**2 - np.log(sd) - 0.5 * LOG_2PI, z / sd

    return fn


def exponential_emission(x: FloatArray, rate: FloatArray) -> tuple[FloatArray, FloatArray]:
    r = rate[:, :, None]
    return np.log(r) - r * x[None, None, :], 1.0 / r - x[None, None, :]


def _chain(g: FloatArray, p: Ordered2) -> tuple[FloatArray, FloatArray]:
    """(d/da, d/db) of a term with gradient g [L, 2] in (x1, x2), Jacobian gradient added."""
    return (g[:, 0] + g[:, 1]) * p.dx1_da, g[:, 1] * p.dx2_db + 1.0


def _logdensity(
    streams: tuple[_Stream, _Stream], alpha: FloatArray, positive: bool
) -> LogDensityFn:
    def fn(theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        pars = [ordered2(theta[:, i], theta[:, i + 1], positive) for i in (0, 2)]
        parts = [
            s.emission(s.obs, np.stack([p.x1, p.x2])) for s, p in zip(streams, pars, strict=True)
        ]
        log_e = parts[0][0] + parts[1][0]
        hmm = hmm_terms(log_e, [parts[0][1], parts[1][1]], theta[:, 4:], alpha)
        value, grads = hmm.value, []
        for p, g_lik in zip(pars, hmm.emission_grads, strict=True):
            x = np.stack([p.x1, p.x2], axis=1)
            value = value + normal_lpdf(x, PRIOR_LOC, 1.0).sum(axis=1) + p.log_jacobian
            da, db = _chain(g_lik - (x - PRIOR_LOC), p)
            grads += [da + (1.0 if positive else 0.0), db]
        return value, np.column_stack([*grads, hmm.logit_grad])

    return fn


def _constrain(positive: bool) -> Callable[[FloatArray], dict[str, FloatArray]]:
    def fn(theta: FloatArray) -> dict[str, FloatArray]:
        phi = ordered2(theta[..., 0], theta[..., 1], positive)
        lam = ordered2(theta[..., 2], theta[..., 3], positive)
        named = {"phi[1]": phi.x1, "phi[2]": phi.x2, "lambda[1]": lam.x1, "lambda[2]": lam.x2}
        return {**simplex_rows(theta[..., 4:]), **named}

    return fn


def _target(
    data: Mapping[str, Any], emissions: tuple[Emission, Emission], positive: bool
) -> Target:
    u, v = (np.asarray(data[k], dtype=np.float64) for k in ("u", "v"))
    streams = (_Stream(u, emissions[0]), _Stream(v, emissions[1]))
    alpha = np.asarray(data["alpha"], dtype=np.float64)
    return Target(DIM, _logdensity(streams, alpha, positive), _constrain(positive))


def target_normal(data: Mapping[str, Any]) -> Target:
    """hmm_drive_1: u ~ N(phi_k, tau), v ~ N(lambda_k, rho)."""
    emissions = (normal_emission(float(data["tau"])), normal_emission(float(data["rho"])))
    return _target(data, emissions, positive=False)


def target_exponential(data: Mapping[str, Any]) -> Target:
    """hmm_drive_0: u ~ Exponential(phi_k), v ~ Exponential(lambda_k)."""
    return _target(data, (exponential_emission, exponential_emission), positive=True)
