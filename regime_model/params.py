"""The unconstrained parameter vector theta of the K-state HMM, its transform and its prior.

Layout of theta [L, D], D = K + K + K(K-1):
    mu_0..mu_{K-1}            regime means
    s1, eta_1..eta_{K-1}      log sigma_0 = s1; sigma_k = sigma_{k-1} (1 + exp(eta_k))
    u_i (K-1 each, row-major) log(P_ij / P_ii) for j != i: the diagonal is the reference
                              coordinate of each row's additive log-ratio transform

The ordering sigma_0 < sigma_1 < ... labels the regimes (0 = calmest) and removes label
switching without a hard constraint.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model.types import FloatArray, Priors

MIN_STATES = 2
MAX_STATES = 4


class Constrained(NamedTuple):
    mu: FloatArray  # [L, K]
    log_sigma: FloatArray  # [L, K], increasing along K
    log_trans: FloatArray  # [L, K, K], rows = "from" state


def n_params(K: int) -> int:
    """D(K): K means, K scale coordinates, K rows of K-1 transition logits."""
    check_states(K)
    return 2 * K + K * (K - 1)


def check_states(K: int) -> None:
    if not MIN_STATES <= K <= MAX_STATES:
        raise ValueError(f"n_states must be in {MIN_STATES}..{MAX_STATES}, got {K}")


def _offdiag(K: int) -> np.ndarray:
    return ~np.eye(K, dtype=bool)


def _sigmoid(x: FloatArray) -> FloatArray:
    return np.exp(-np.logaddexp(0.0, -x))


def _logits(theta: FloatArray, K: int) -> FloatArray:
    """Full [L, K, K] logit matrix: u off the diagonal, 0 (the reference) on it."""
    logits = np.zeros((theta.shape[0], K, K))
    logits[:, _offdiag(K)] = theta[:, 2 * K :]
    return logits


def _log_trans(theta: FloatArray, K: int) -> FloatArray:
    """[L, K, K] log transition matrices: each row's softmax of its logits."""
    logits = _logits(theta, K)
    return logits - np.logaddexp.reduce(logits, axis=2, keepdims=True)


def constrain(theta: FloatArray, K: int) -> Constrained:
    mu, s1, eta = theta[:, :K], theta[:, K], theta[:, K + 1 : 2 * K]
    steps = np.concatenate([s1[:, None], np.logaddexp(0.0, eta)], axis=1)
    return Constrained(mu, np.cumsum(steps, axis=1), _log_trans(theta, K))


def _normal_logpdf_and_grad(
    x: FloatArray, loc: float, scale: float
) -> tuple[FloatArray, FloatArray]:
    z = (x - loc) / scale
    return -0.5 * z**2 - np.log(scale) - 0.5 * np.log(2 * np.pi), -z / scale


def dirichlet_alpha(K: int, priors: Priors) -> FloatArray:
    return np.where(np.eye(K, dtype=bool), priors.alpha_stay, priors.alpha_move)


def log_prior(theta: FloatArray, K: int, priors: Priors) -> tuple[FloatArray, FloatArray]:
    """Log prior density of theta INCLUDING the transforms' log-Jacobians, and its gradient.

    mu, s1 and eta carry their normal priors directly (no Jacobian needed). For a row p of P
    under the log-ratio transform, log|J| = sum_j log p_j, so Dirichlet(alpha) plus Jacobian
    is simply sum_j alpha_j log p_j (+ const); its gradient is that of the likelihood's
    transition term with alpha as pseudo-counts, handled by `transition_logit_grad`.
    """
    log_trans = _log_trans(theta, K)
    value, (g_mu, g_s, g_eta) = _normal_terms_and_value(theta, K, priors, log_trans)
    alpha = dirichlet_alpha(K, priors)
    grad = np.concatenate(
        [
            g_mu,
            g_s[:, None],
            g_eta,
            transition_logit_grad(np.broadcast_to(alpha, log_trans.shape), log_trans),
        ],
        axis=1,
    )
    return value, grad


def log_prior_value(theta: FloatArray, K: int, priors: Priors) -> FloatArray:
    """log_prior's value alone, to float64's rounding (not its bits): reweighing a run's
    draws (regime_model.reweigh) reads no gradient, and both of its densities come from
    here. Each row's Dirichlet term in closed form, alpha_move * sum of the row's logits
    minus its alpha total times the logits' log-sum-exp (the diagonal's logit is 0), with
    no [L, K, K] matrix: on the H200 host log_prior's value was 5.5 of a trial account's
    9.5 ms reweighing under cProfile, now 1.8 (docs/benchmarks.md, thirty-third session)."""
    t = np.ascontiguousarray(theta.T)  # [D, L]: each coordinate contiguous, no small axes
    out: FloatArray = np.full(t.shape[1], -(
        K * np.log(priors.mu_scale) + np.log(priors.log_sigma_scale)
        + (K - 1) * np.log(priors.eta_scale) + K * np.log(2 * np.pi)))  # fmt: skip
    for row, loc, scale in [(k, priors.mu_loc, priors.mu_scale) for k in range(K)] + [
            (K, priors.log_sigma_loc, priors.log_sigma_scale)] + [
            (K + k, priors.eta_loc, priors.eta_scale) for k in range(1, K)]:  # fmt: skip
        z = (t[row] - loc) / scale
        out -= 0.5 * z * z
    row_alpha = priors.alpha_stay + (K - 1) * priors.alpha_move
    for i in range(K):  # row i of P: its logits u (K - 1 of them) and the diagonal's 0
        u = t[2 * K + i * (K - 1) : 2 * K + (i + 1) * (K - 1)]
        top = np.maximum(u.max(axis=0), 0.0)
        lse = top + np.log(np.exp(-top) + np.exp(u - top).sum(axis=0))
        out += priors.alpha_move * u.sum(axis=0) - row_alpha * lse
    return out


def _normal_terms_and_value(
    theta: FloatArray, K: int, priors: Priors, log_trans: FloatArray
) -> tuple[FloatArray, tuple[FloatArray, FloatArray, FloatArray]]:
    """The log prior (with the Jacobians), and the normal priors' gradients."""
    lp_mu, g_mu = _normal_logpdf_and_grad(theta[:, :K], priors.mu_loc, priors.mu_scale)
    lp_s, g_s = _normal_logpdf_and_grad(theta[:, K], priors.log_sigma_loc, priors.log_sigma_scale)
    lp_eta, g_eta = _normal_logpdf_and_grad(
        theta[:, K + 1 : 2 * K], priors.eta_loc, priors.eta_scale
    )
    alpha = dirichlet_alpha(K, priors)
    value = lp_mu.sum(1) + lp_s + lp_eta.sum(1) + (alpha * log_trans).sum((1, 2))
    return value, (g_mu, g_s, g_eta)


def transition_logit_grad(counts: FloatArray, log_trans: FloatArray) -> FloatArray:
    """Gradient of sum_ij counts_ij log P_ij with respect to the off-diagonal logits u.

    With P = softmax(row logits), d/du_im = counts_im - P_im * sum_j counts_ij; the
    likelihood's term has the same form because dlogL/dP_ij = N_ij / P_ij, N = expected
    transition counts. No division by P, so it stays finite for tiny probabilities.
    """
    K = log_trans.shape[-1]
    full = counts - np.exp(log_trans) * counts.sum(axis=2, keepdims=True)
    offdiag: FloatArray = full[:, _offdiag(K)]
    return offdiag


def scale_grad(theta: FloatArray, K: int, g_log_sigma: FloatArray) -> FloatArray:
    """Pull a gradient w.r.t. log sigma [L, K] back to (s1, eta) [L, K].

    log sigma_k = s1 + sum_{j<=k} softplus(eta_j): every state depends on s1, and eta_j
    moves every state from j upwards with slope sigmoid(eta_j).
    """
    upper = np.cumsum(g_log_sigma[:, ::-1], axis=1)[:, ::-1]
    eta = theta[:, K + 1 : 2 * K]
    return np.concatenate([upper[:, :1], _sigmoid(eta) * upper[:, 1:]], axis=1)


def moved_prior_change(
    mu: FloatArray, s1: FloatArray, log_ratio: FloatArray, priors: Priors
) -> FloatArray:
    """log_prior_value of draws moved into units scaled by 1 / r (the means times r, log
    sigma_0 plus log r; log_ratio [L] = log r), less its value unmoved, from their means
    mu [K, L] (state-major) and log sigma_0 s1 [L] alone: the other terms do not move.
    What reweighing adds at the bar instead of evaluating the whole prior there
    (regime_model.next_bar)."""
    r = np.exp(log_ratio)
    # (mu r - m)^2 - (mu - m)^2 = (r^2 - 1) mu^2 - 2 m (r - 1) mu, summed over the K means
    means = (r * r - 1.0) * (mu * mu).sum(axis=0) - 2.0 * priors.mu_loc * (r - 1.0) * mu.sum(axis=0)
    # (s1 + lr - m)^2 - (s1 - m)^2 = lr (2 (s1 - m) + lr)
    scale = log_ratio * (2.0 * (s1 - priors.log_sigma_loc) + log_ratio)
    out: FloatArray = -0.5 * (means / priors.mu_scale**2 + scale / priors.log_sigma_scale**2)
    return out
