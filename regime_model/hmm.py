"""Forward-backward for batched Gaussian HMMs, vectorised over time by a parallel scan.

Conventions: lanes L, bars T, states K; P[l, i, j] = P(x_t = j | x_{t-1} = i). Emission
and message arrays are state-major [K, L, T] (see `scan`): every elementwise step then
reads whole contiguous [L, T] slabs.

alpha_t = init diag(e_0) M_1 ... M_t and beta_t = M_{t+1} ... M_{T-1} 1 with
M_t = P diag(e_t): the prefixes and the suffixes of one sequence of matrices, both from one
odd-even recursion (`scan.prefix_and_suffix`) whose pair products serve both directions.

`forward_filter` is the forward recursion alone, one bar at a time (vectorised over lanes,
not time): the likelihood and last filtered state of many draws, as the device's
predictive kernel computes them, for the sampler between bars' pass.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model.scan import prefix_and_suffix, row_times, total_product
from regime_model.types import FloatArray

LOG_2PI = float(np.log(2 * np.pi))


class Emissions(NamedTuple):
    rel: FloatArray  # [K, L, T] e_t(k) / max_k e_t(k), in (0, 1]
    log_max: FloatArray  # [L, T] log max_k e_t(k)


class HMMPosterior(NamedTuple):
    log_likelihood: FloatArray  # [L]
    smoothed: FloatArray  # [K, L, T] P(x_t = k | y) = dlogL / dlog e_t(k)
    transition_counts: FloatArray  # [L, K, K] sum_t P(x_{t-1}=i, x_t=j | y)
    filtered_last: FloatArray  # [L, K] P(x_{T-1} = k | y)


def gaussian_log_emissions(y: FloatArray, mu: FloatArray, log_sigma: FloatArray) -> FloatArray:
    """log N(y_t | mu_k, sigma_k^2) as [K, L, T] for y [L, T], mu and log_sigma [L, K]."""
    z = (y[None] - mu.T[:, :, None]) * np.exp(-log_sigma.T)[:, :, None]
    return -0.5 * z**2 - log_sigma.T[:, :, None] - 0.5 * LOG_2PI


def relative_emissions(log_e: FloatArray) -> Emissions:
    """Rescale each bar's emissions by their max: one far outlier cannot underflow them all."""
    log_max = log_e.max(axis=0)
    return Emissions(np.exp(log_e - log_max), log_max)


def _forward_sequence(rel: FloatArray, P: FloatArray, init: FloatArray) -> FloatArray:
    M = P.transpose(1, 2, 0)[:, :, :, None] * rel[None]  # M[i, j, l, t] = P_ij e_t(j)
    M[:, :, :, 0] = (init.T * rel[:, :, 0])[None]
    return M


def _normalise(x: FloatArray) -> FloatArray:
    out: FloatArray = x / x.sum(axis=0)
    return out


def messages(rel: FloatArray, P: FloatArray, init: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Normalised filtered (alpha) and backward (beta) messages, both [K, L, T]."""
    K, L, T = rel.shape
    alpha, beta = np.empty((K, L, T)), np.empty((K, L, T))
    alpha[..., 0] = _normalise(init.T * rel[:, :, 0])
    beta[..., -1] = 1.0 / K
    if T > 1:
        M = P.transpose(1, 2, 0)[:, :, :, None] * rel[None, :, :, 1:]
        alpha[..., 1:], beta[..., :-1] = prefix_and_suffix(alpha[..., 0], M, beta[..., -1])
    return alpha, beta


def _predicted(alpha: FloatArray, P: FloatArray, init: FloatArray) -> FloatArray:
    """P(x_t | y_<t) [K, L, T]: init at t=0, then alpha_{t-1} P."""
    ahead = (alpha[:, None, :, :-1] * P.transpose(1, 2, 0)[:, :, :, None]).sum(axis=0)
    return np.concatenate([init.T[:, :, None], ahead], axis=2)


def forward_backward(log_e: FloatArray, P: FloatArray, init: FloatArray) -> HMMPosterior:
    """Log-likelihood, smoothed marginals, expected transitions and the last filtered state.

    log_e [K, L, T], P [L, K, K], init [L, K]. log p(y) = sum_t log p(y_t | y_<t) with
    p(y_t | y_<t) = sum_k pred_t(k) e_t(k); xi_t(i, j) is proportional to
    alpha_{t-1}(i) P_ij e_t(j) beta_t(j) and sums to one over (i, j), so the messages'
    own normalisations never need to be tracked.
    """
    rel, log_max = relative_emissions(log_e)
    alpha, beta = messages(rel, P, init)
    pred = _predicted(alpha, P, init)
    loglik = (np.log((pred * rel).sum(axis=0)) + log_max).sum(axis=1)
    smoothed = _normalise(alpha * beta)
    eb = rel[:, :, 1:] * beta[:, :, 1:]
    weight = eb / (pred[:, :, 1:] * eb).sum(axis=0)
    # sum_t alpha_{t-1}(i) weight_t(j), by numpy's own multiply and pairwise sum rather than
    # a batched matmul: BLAS picks its kernel, and with it the summation order, by CPU, so
    # the same numpy gave other bits on another x86-64 host (bench digest).
    pair_sums = (alpha[:, None, :, :-1] * weight[None]).sum(axis=-1).transpose(2, 0, 1)
    return HMMPosterior(loglik, smoothed, P * pair_sums, alpha[:, :, -1].T)


def filtered_last(log_e: FloatArray, P: FloatArray, init: FloatArray) -> FloatArray:
    """P(x_{T-1} = k | y) [L, K] from one O(T) tree product; no backward pass needed."""
    rel, _ = relative_emissions(log_e)
    rows = total_product(_forward_sequence(rel, P, init))[0]
    return _normalise(rows).T


def log_likelihood(
    y: FloatArray, mu: FloatArray, sigma: FloatArray, P: FloatArray, init: FloatArray
) -> float:
    """float64 log p(y) of 1-D returns y [T] under mu, sigma [K], P [K, K], init [K]."""
    y2 = np.asarray(y, dtype=np.float64)[None]
    log_e = gaussian_log_emissions(y2, np.asarray(mu)[None], np.log(np.asarray(sigma))[None])
    return float(
        forward_backward(log_e, np.asarray(P)[None], np.asarray(init)[None]).log_likelihood[0]
    )


def forward_filter(
    y: FloatArray, mu: FloatArray, log_sigma: FloatArray, P: FloatArray, per_row: int = 1
) -> tuple[FloatArray, FloatArray]:
    """log p(y) [L] and P(x_{T-1} = k | y) [L, K] from a uniform initial state, by the scaled
    forward recursion one bar at a time: what the device's predictive kernel runs per lane,
    here vectorised over lanes. y [R, T] holds one window per row, read by the row's
    `per_row` lanes (L = R * per_row) without being repeated; mu, log_sigma [L, K] and
    P [L, K, K]. No backward pass and no smoothed marginals: the sampler between bars
    needs only these two (forward_backward gives the same values, other roundings)."""
    R, T = y.shape
    K = mu.shape[1]
    lanes = (K, R, per_row)  # state-major: each state's lanes one contiguous slab

    def slabs(x: FloatArray, *shape: int) -> FloatArray:  # a transposed view runs 3-5x slower
        return np.ascontiguousarray(x).reshape(shape)

    mu_k, inv = slabs(mu.T, *lanes), slabs(np.exp(-log_sigma.T), *lanes)
    const = slabs(-log_sigma.T - 0.5 * LOG_2PI, *lanes)
    Pk = slabs(P.transpose(1, 2, 0), K, K, R, per_row)
    alpha = np.full(lanes, 1.0 / K)  # the initial state; bar 0 needs no transition
    log_total = np.zeros((R, per_row))
    for start in range(0, T, _CHUNK):  # a chunk's emissions at once, time-major
        z = (y.T[start : start + _CHUNK, None, :, None] - mu_k) * inv
        log_e = const - 0.5 * z * z
        top = log_e.max(axis=1)
        rel = np.exp(log_e - top[:, None])
        totals = np.empty(top.shape)
        for t in range(len(rel)):
            pred = alpha if start + t == 0 else row_times(alpha, Pk)
            joint = pred * rel[t]
            totals[t] = joint.sum(axis=0)
            alpha = joint / totals[t]
        log_total += (np.log(totals) + top).sum(axis=0)
    return log_total.reshape(-1), alpha.reshape(K, -1).T


_CHUNK = 32  # bars whose emissions are computed together: a few MB at 28,800 lanes

