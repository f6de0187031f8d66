"""The HMM's unconstrained log posterior density, its exact gradient, and the predictive.

Everything here works on returns already divided by their robust scale (see `scaling`).
The initial state distribution is uniform rather than the stationary distribution of P:
its gradient is then exact with no linear solve (and no adjoint of one) per lane, and over
a window of hundreds of bars the first bar's state prior carries negligible weight.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model.hmm import (
    filtered_last,
    forward_backward,
    forward_filter,
    gaussian_log_emissions,
)
from regime_model.params import (
    Constrained,
    constrain,
    log_prior,
    scale_grad,
    transition_logit_grad,
)
from regime_model.types import FloatArray, Priors


class Predictive(NamedTuple):
    filtered_last: FloatArray  # [L, K] P(regime at the last bar | y)
    mean: FloatArray  # [L] mean of the next return (scaled units)
    var: FloatArray  # [L] variance of the next return (scaled units)


def uniform_init(L: int, K: int) -> FloatArray:
    return np.full((L, K), 1.0 / K)


def _emission_grads(
    y: FloatArray, c: Constrained, smoothed: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """dlogL/dmu and dlogL/dlog sigma [L, K], given dlogL/dlog e_t(k) = smoothed marginals."""
    inv_sigma = np.exp(-c.log_sigma.T)[:, :, None]
    z = (y[None] - c.mu.T[:, :, None]) * inv_sigma
    g_mu = (smoothed * z * inv_sigma).sum(axis=2).T
    g_log_sigma = (smoothed * (z * z - 1.0)).sum(axis=2).T
    return g_mu, g_log_sigma


def log_density_and_grad(
    theta: FloatArray, y: FloatArray, K: int, priors: Priors
) -> tuple[FloatArray, FloatArray]:
    """log p(theta | y) + const [L] and its gradient [L, D], for theta [L, D] and y [L, T].

    Non-finite results are returned as they come; the sampler treats them as divergences.
    """
    c = constrain(theta, K)
    post = forward_backward(
        gaussian_log_emissions(y, c.mu, c.log_sigma), np.exp(c.log_trans), uniform_init(len(y), K)
    )
    prior, g_prior = log_prior(theta, K, priors)
    g_mu, g_log_sigma = _emission_grads(y, c, post.smoothed)
    grad = np.concatenate(
        [
            g_mu,
            scale_grad(theta, K, g_log_sigma),
            transition_logit_grad(post.transition_counts, c.log_trans),
        ],
        axis=1,
    )
    return post.log_likelihood + prior, grad + g_prior


def predictive(theta: FloatArray, y: FloatArray, K: int) -> Predictive:
    """Filtered regime at the last bar and the mixture moments of the next return.

    Next-state probabilities w = filtered_last @ P; the next return is the mixture
    sum_k w_k N(mu_k, sigma_k^2), so mean = w.mu and var = w.(sigma^2 + mu^2) - mean^2.
    """
    c = constrain(theta, K)
    P = np.exp(c.log_trans)
    last = filtered_last(gaussian_log_emissions(y, c.mu, c.log_sigma), P, uniform_init(len(y), K))
    return _next_return(last, P, c)


def predictive_and_likelihood(
    theta: FloatArray, y: FloatArray, K: int, per_row: int = 1
) -> tuple[Predictive, FloatArray]:
    """`predictive` and log p(y | theta) [L] from one forward filter (hmm.forward_filter),
    with y [R, T] read by `per_row` lanes a row: the sampler between bars' pass over every
    draw. The same values as `predictive` and `log_density_and_grad`'s likelihood to
    float64's rounding (a sequential recursion where they take tree products), in a fifth
    to a tenth of their time, no window repeated per draw (docs/benchmarks.md, thirty-second
    session)."""
    c = constrain(theta, K)
    P = np.exp(c.log_trans)
    loglik, last = forward_filter(y, c.mu, c.log_sigma, P, per_row)
    return _next_return(last, P, c), loglik


def _next_return(last: FloatArray, P: FloatArray, c: Constrained) -> Predictive:
    w = np.einsum("lk,lkj->lj", last, P)
    mean = (w * c.mu).sum(axis=1)
    second = (w * (np.exp(2 * c.log_sigma) + c.mu**2)).sum(axis=1)
    return Predictive(last, mean, np.maximum(second - mean**2, 0.0))

