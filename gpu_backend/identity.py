"""The identity gate: a GPU backend against the numpy float64 reference, point by point.

Parameter points are random draws around the prior's centre plus edge points (sticky and
flat transition rows, tiny and huge scales, far-apart regimes); returns are
regime-switching Student-t series with an outlier bar. Errors are relative per lane:
|logp - ref| / max(|ref|, 1) and max|grad - ref| / max(max|ref|, 1).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model.backend import Backend
from regime_model.params import n_params
from regime_model.types import FloatArray, Priors

LOGP_TOL = 1e-6  # T <= 1,000 (the gate)
LOGP_TOL_LONG = 1e-5  # T > 1,000: reported against this looser bound
GRAD_TOL = 1e-4
PRED_TOL = 1e-5  # absolute, on probabilities and on moments relative to the predictive sd


class PointCheck(NamedTuple):
    states: int
    window: int
    lanes: int
    logp_err: float
    grad_err: float
    pred_err: float
    passed: bool


def edge_points(K: int) -> FloatArray:
    """Unconstrained theta at the corners the sampler can wander into."""
    D = n_params(K)
    base = np.zeros(D)
    base[K] = -0.3
    base[K + 1 : 2 * K] = 0.7
    base[2 * K :] = -3.0
    rows = []
    for mu, s1, eta, u in [
        (0.0, -0.3, 0.7, -12.0),  # very sticky: P_ii ~ 1 - 1e-5
        (0.0, -0.3, 0.7, 0.0),  # flat rows: P_ij = 1/K
        (0.0, -3.0, -4.0, -3.0),  # tiny, nearly equal scales
        (0.0, 2.5, 3.0, -3.0),  # huge scales, far apart
        (1.5, -0.3, 0.7, 2.0),  # far means, switching more than staying
    ]:
        theta = base.copy()
        theta[:K] = mu * np.linspace(-1.0, 1.0, K)
        theta[K], theta[K + 1 : 2 * K], theta[2 * K :] = s1, eta, u
        rows.append(theta)
    return np.array(rows)


def parameter_points(K: int, lanes: int, rng: np.random.Generator) -> FloatArray:
    edges = edge_points(K)
    centre = edges[0].copy()
    centre[2 * K :] = -3.0
    random = centre + 0.7 * rng.standard_normal((max(lanes - len(edges), 1), n_params(K)))
    return np.concatenate([edges, random])  # every edge point, at least one random point


def regime_returns(lanes: int, T: int, rng: np.random.Generator) -> FloatArray:
    """Scaled returns: calm/turbulent segments (vol ratio 3), t(5) noise, one outlier."""
    segment = rng.integers(0, 2, size=(lanes, T // 50 + 1)).repeat(50, axis=1)[:, :T]
    y = rng.standard_t(5, size=(lanes, T)) * np.where(segment == 1, 2.0, 0.6)
    y[:, T // 2] = 12.0
    return y


def _rel(err: FloatArray, ref: FloatArray) -> float:
    return float(np.max(err / np.maximum(ref, 1.0)))


def compare_point_set(
    gpu: Backend, cpu: Backend, K: int, T: int, lanes: int, seed: int = 0
) -> PointCheck:
    rng = np.random.default_rng([seed, K, T])
    theta = parameter_points(K, lanes, rng)
    y = regime_returns(len(theta), T, rng)
    priors = Priors()
    lp, g = gpu.hmm_value_and_grad(theta, y, K, priors)
    rlp, rg = cpu.hmm_value_and_grad(theta, y, K, priors)
    logp_err = _rel(np.abs(lp - rlp), np.abs(rlp))
    grad_err = _rel(np.abs(g - rg).max(axis=1), np.abs(rg).max(axis=1))
    pred, ref = gpu.hmm_predictive(theta, y, K), cpu.hmm_predictive(theta, y, K)
    sd = np.sqrt(ref.var)
    pred_err = float(
        max(
            np.abs(pred.filtered_last - ref.filtered_last).max(),
            (np.abs(pred.mean - ref.mean) / sd).max(),
            (np.abs(np.sqrt(pred.var) - sd) / sd).max(),
        )
    )
    logp_tol = LOGP_TOL if T <= 1000 else LOGP_TOL_LONG
    passed = logp_err <= logp_tol and grad_err <= GRAD_TOL and pred_err <= PRED_TOL
    return PointCheck(K, T, len(theta), logp_err, grad_err, pred_err, passed)
