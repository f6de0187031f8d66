"""Each lane's posterior mode and curvature: where `fit` starts its chains and how it
whitens the space they move in.

Saddle-free Newton on the log density, all lanes in lockstep. The Hessian comes from
forward differences of the exact gradient, the lane and its D nudged copies in one batched
call; the step is V |Lambda|^-1 V^T g from its eigen-decomposition, so a saddle or an
upward-curved direction still climbs. No step is longer than MAX_STEP (far from the mode
the quadratic model is only a direction), and a step that does not climb is retried at a
quarter of its length (backtracking). A lane stops once its Newton decrement
g^T |H|^-1 g (about twice the log density it could still gain) is below TOLERANCE, and
from then on costs nothing: only the lanes still climbing are evaluated.

The whitening W = V Lambda^-1/2 maps z ~ N(0, I) to the Laplace approximation
mode + W z ~ N(mode, -H^-1): HMC on z with a unit metric is HMC on theta with the dense
metric -H. An eigenvalue near zero (a flat direction) is floored at EIGEN_FLOOR times the
largest, so no direction gets an unbounded scale. The metric only has to be good, not
exact: the sampler's Metropolis step keeps the target exact whatever W is.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import numpy as np

from regime_model import hmc, rng
from regime_model.symmetric_eigen import eigh
from regime_model.types import BoolArray, FloatArray, LogDensityFn

NUDGE = 1e-5  # forward-difference step on theta (O(1) unconstrained coordinates)
TOLERANCE = 1e-6  # Newton decrement below which a lane has found its mode (in nats)
MAX_ITERATIONS = 50
MAX_STEP = 2.0  # longest Newton step, in theta units
EIGEN_FLOOR = 1e-6
CHECK_DRAWS = 16  # draws per lane of the importance check


class Laplace(NamedTuple):
    mode: FloatArray  # [L, D]
    logdensity: FloatArray  # [L] at the mode
    whiten: FloatArray  # [L, D, D]: theta = mode + whiten @ z
    converged: BoolArray  # [L] Newton decrement below TOLERANCE
    calls: int  # batched log-density calls, each of (lanes still climbing) * (D + 1) lanes


class _Point(NamedTuple):
    theta: FloatArray  # [L, D]
    logdensity: FloatArray  # [L]
    grad: FloatArray  # [L, D]
    curvature: FloatArray  # [L, D, D] minus the symmetrised Hessian


def _evaluate(fn: LogDensityFn, theta: FloatArray) -> _Point:
    L, D = theta.shape
    nudged = theta[:, None, :] + np.concatenate([np.zeros((1, D)), NUDGE * np.eye(D)])[None]
    value, grad = fn(nudged.reshape(-1, D))
    value, grad = value.reshape(L, D + 1), grad.reshape(L, D + 1, D)
    hessian = (grad[:, 1:] - grad[:, :1]) / NUDGE
    return _Point(theta, value[:, 0], grad[:, 0], -0.5 * (hessian + hessian.transpose(0, 2, 1)))


def _finite(p: _Point) -> BoolArray:
    ok: BoolArray = np.isfinite(p.logdensity) & np.isfinite(p.curvature).all(axis=(1, 2))
    return ok


def find_modes(fn: LogDensityFn, start: FloatArray) -> Laplace:
    """Climb from `start` [L, D] to each lane's mode of `fn` and whiten there.

    A lane whose start is not finite, or that does not converge within MAX_ITERATIONS,
    keeps its best point: its `converged` is False and its whitening still serves as a
    metric (the sampler's own warm-up and diagnostics take it from there).
    """
    point = _evaluate(fn, np.asarray(start, dtype=np.float64))
    shrink = np.ones(len(start))
    calls, decrement = 1, np.full(len(start), np.inf)
    for _ in range(MAX_ITERATIONS):
        values, vectors = eigh(np.where(_finite(point)[:, None, None], point.curvature, 0.0))
        along = _transposed_times(vectors, point.grad)
        decrement = (along**2 / np.maximum(np.abs(values), 1e-300)).sum(axis=1)
        moving = _finite(point) & (decrement > TOLERANCE)
        if not moving.any():
            break
        inverse = np.where(moving[:, None], 1.0 / np.maximum(np.abs(values), 1e-300), 0.0)
        step = _times(vectors, along * inverse)
        length = np.sqrt((step * step).sum(axis=1, keepdims=True))
        step *= shrink[:, None] * np.minimum(1.0, MAX_STEP / np.maximum(length, 1e-300))
        trial = _evaluate(fn, (point.theta + step)[moving])
        calls += 1
        better = np.zeros_like(moving)
        better[moving] = _finite(trial) & (trial.logdensity >= point.logdensity[moving])
        taken = better[moving]
        point = _Point(*(_assign(o, n[taken], better) for o, n in zip(point, trial, strict=True)))
        shrink = np.where(better, 1.0, 0.25 * shrink)
    # A lane that never had a finite point gets the unit metric (zero curvature).
    curvature = np.where(_finite(point)[:, None, None], point.curvature, 0.0)
    converged = decrement <= TOLERANCE
    return Laplace(point.theta, point.logdensity, whitening(curvature), converged, calls)


def _assign(old: FloatArray, new: FloatArray, where: BoolArray) -> FloatArray:
    out = old.copy()
    out[where] = new
    return out


def whitening(curvature: FloatArray) -> FloatArray:
    """W [L, D, D] with W W^T = curvature^-1, eigenvalues taken absolute and floored."""
    values, vectors = eigh(np.nan_to_num(curvature))
    values = np.abs(values)
    top = values.max(axis=1, keepdims=True)
    # No curvature at all (a lane that never had a finite point): the unit metric.
    values = np.where(top > 0, np.maximum(values, EIGEN_FLOOR * top), 1.0)
    out: FloatArray = vectors / np.sqrt(values)[:, None, :]
    return out


def _times(W: FloatArray, z: FloatArray) -> FloatArray:
    """W [L, D, D] times z [L, D] per lane, by multiply and sum: no BLAS, whose kernels
    (and last bits) depend on the CPU (see symmetric_eigen)."""
    out: FloatArray = (W * z[:, None, :]).sum(axis=2)
    return out


def _transposed_times(W: FloatArray, g: FloatArray) -> FloatArray:
    out: FloatArray = (W * g[:, :, None]).sum(axis=1)
    return out


def to_theta(laplace: Laplace, z: FloatArray) -> FloatArray:
    """Whitened positions z [L, D] or [L, S, D] back to theta."""
    if z.ndim == 2:
        return laplace.mode + _times(laplace.whiten, z)
    moved = (laplace.whiten[:, None] * z[:, :, None, :]).sum(axis=-1)
    out: FloatArray = laplace.mode[:, None, :] + moved
    return out


def whitened(fn: LogDensityFn, laplace: Laplace) -> hmc.FusedDensity:
    """`fn` as a function of z, theta = mode + W z: the same density up to a constant
    (the Jacobian |W| is fixed) and the gradient W^T grad; its trajectories are the
    split integrator's around N(0, I), the Laplace approximation in z."""

    def density(z: FloatArray) -> tuple[FloatArray, FloatArray]:
        value, grad = fn(to_theta(laplace, z))
        return value, _transposed_times(laplace.whiten, grad)

    return hmc.FusedDensity(density, partial(hmc.split_leapfrog, density))


def importance_ess(fn: LogDensityFn, laplace: Laplace, stream: rng.Stream) -> float:
    """How Gaussian the posterior is around the modes: the importance ESS, as a fraction,
    of CHECK_DRAWS draws per lane from its Laplace approximation (1: exactly Gaussian).

    The weights are p(theta) / q(theta) with q the lane's N(mode, W W^T), both relative to
    the mode, pooled over lanes; the draws come from the lanes' own streams (INIT purpose,
    iterations 2 onwards), so the check is as reproducible as the rest.
    """
    L, D = laplace.mode.shape
    z = rng.normals(stream, np.arange(2, 2 + CHECK_DRAWS), rng.Purpose.INIT, D)  # [L, M, D]
    value, _ = fn(to_theta(laplace, z).reshape(-1, D))
    log_w = value.reshape(L, -1) - laplace.logdensity[:, None] + 0.5 * (z * z).sum(axis=-1)
    log_w = log_w[np.isfinite(laplace.logdensity)]
    if log_w.size == 0 or not np.isfinite(log_w).any():
        return 0.0
    w = np.exp(np.where(np.isfinite(log_w), log_w, -np.inf) - np.max(log_w[np.isfinite(log_w)]))
    return float(w.sum() ** 2 / (w * w).sum() / w.size)
