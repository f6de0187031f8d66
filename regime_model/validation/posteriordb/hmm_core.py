"""The two-state HMM likelihood shared by the posteriordb HMMs, on our forward-backward.

Stan's forward algorithm starts from gamma_1 = emissions (no initial distribution), which
is our uniform-initial likelihood plus log K. Each transition row is a simplex under
Dirichlet(alpha); in the additive log-ratio coordinates of `regime_model.params` (the
diagonal is the reference) density plus Jacobian is sum_j alpha_j log p_j + const, so the
whole transition term is sum_ij (N_ij + alpha_ij) log P_ij with N the expected counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from regime_model.hmm import forward_backward
from regime_model.params import transition_logit_grad
from regime_model.types import FloatArray

K = 2


class HMMTerms(NamedTuple):
    value: FloatArray  # [L] log-likelihood + transition prior and Jacobian
    emission_grads: list[FloatArray]  # one [L, K] per emission parameter group
    logit_grad: FloatArray  # [L, 2] d/du of the transition coordinates


def log_transitions(u: FloatArray) -> FloatArray:
    """[L, 2, 2] log P from u = (log P01/P00, log P10/P11)."""
    logits = np.zeros((len(u), K, K))
    logits[:, 0, 1], logits[:, 1, 0] = u[:, 0], u[:, 1]
    out: FloatArray = logits - np.logaddexp.reduce(logits, axis=2, keepdims=True)
    return out


def hmm_terms(
    log_e: FloatArray, dlog_e: Sequence[FloatArray], u: FloatArray, alpha: FloatArray
) -> HMMTerms:
    """log_e [K, L, T]; dlog_e: d log e_t(k) / d(parameter of state k), each [K, L, T]."""
    log_trans = log_transitions(u)
    L = len(u)
    post = forward_backward(log_e, np.exp(log_trans), np.full((L, K), 1.0 / K))
    counts = post.transition_counts + alpha
    value = post.log_likelihood + np.log(K) + (alpha * log_trans).sum(axis=(1, 2))
    grads = [(post.smoothed * d).sum(axis=2).T for d in dlog_e]
    return HMMTerms(value, grads, transition_logit_grad(counts, log_trans))


def simplex_rows(u: FloatArray) -> dict[str, FloatArray]:
    """Stan's names for the transition rows: theta1 = row "from 1", theta2 = row "from 2"."""
    p = np.exp(log_transitions(u.reshape(-1, 2))).reshape(*u.shape[:-1], K, K)
    return {f"theta{i + 1}[{j + 1}]": p[..., i, j] for i in range(K) for j in range(K)}
