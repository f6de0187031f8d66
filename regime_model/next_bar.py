"""A sample's forward filter carried to the next bar, so that reweighing it there takes
one step on the host instead of a pass over the whole window (regime_model.reweigh).

Window n+1 is window n less its first bar plus the new one. Between bars every draw is
filtered over the T-1 bars the windows share, from the uniform initial state as a window
starts; at the bar its new return finishes the filter: one bar's emission, a K-state
mixture per draw. Everything is in the draws' own units (their window's robust scale):
moving a draw into the new window's units scales its means and sigmas by one ratio r and
the returns by the same, so each bar's density divides by r, the window's log likelihood
moves by -T log r for every draw, and the predictive's mean and variance scale by r and
r^2. The prior moves with the draw (params.moved_prior_change). The same values as a pass
over the new window to float64's rounding (tests/regime_model/test_reweigh.py), with no
device call on the bar's path: on the H200 the bar's pass took 13.7-15.2 ms of a trial
account's update with five accounts sharing the GPU (docs/benchmarks.md).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model.backend import Backend
from regime_model.hmm import LOG_2PI
from regime_model.params import constrain, moved_prior_change
from regime_model.scan import row_times
from regime_model.types import FloatArray, Priors


class Ahead(NamedTuple):
    """Lanes' filters over their windows' last T-1 bars, state-major ([K, L]: each state's
    lanes contiguous, as the step reads them), in the draws' units."""

    change: FloatArray  # [L] log p(y_2..y_T) - log p(y_1..y_T): what the shift keeps, less the old
    prior: FloatArray  # [K, L] P(x_{T+1} = k | y_2..y_T): the next bar's regime before its return
    mu: FloatArray  # [K, L]
    inv_sigma: FloatArray  # [K, L]
    log_norm: FloatArray  # [K, L] -log sigma - log(2 pi) / 2: each bar's Gaussian normaliser
    second: FloatArray  # [K, L] sigma^2 + mu^2: the next return's second moment per regime
    trans: FloatArray  # [K, K, L] P, rows the "from" state
    s1: FloatArray  # [L] log sigma_0, as theta holds it (the prior's term that moves)

    def lanes(self, lo: int, hi: int) -> Ahead:
        return Ahead(*(f[..., lo:hi] for f in self))


def join(parts: list[Ahead]) -> Ahead:
    """Several instruments' lanes as one."""
    return Ahead(*(np.concatenate(f, axis=-1) for f in zip(*parts, strict=True)))


def ahead_of(
    theta: FloatArray, scaled: FloatArray, log_likelihood: FloatArray, K: int, per_row: int,
    backend: Backend,
) -> Ahead:
    """Between bars: lanes theta [L, D] filtered over each scaled window's last T-1 bars
    (scaled [L / per_row, T], a row read by `per_row` lanes, as reweigh's pass), given
    their log likelihoods of the whole window [L]: what the next bar's step starts from."""
    pred, tail_ll = backend.hmm_predictive_and_likelihood(theta, scaled[:, 1:], K, per_row)
    c = constrain(theta, K)
    P = np.exp(c.log_trans).transpose(1, 2, 0)  # [K, K, L]
    last = np.ascontiguousarray(np.asarray(pred.filtered_last, dtype=np.float64).T)
    mu, log_sigma = np.ascontiguousarray(c.mu.T), np.ascontiguousarray(c.log_sigma.T)
    return Ahead(np.asarray(tail_ll, dtype=np.float64) - log_likelihood, row_times(last, P), mu,
                 np.exp(-log_sigma), -log_sigma - 0.5 * LOG_2PI,
                 np.exp(2 * log_sigma) + mu * mu, np.ascontiguousarray(P),
                 np.ascontiguousarray(theta[:, K]))  # fmt: skip


class Stepped(NamedTuple):
    """Lanes after the new bar, in the new window's units: the change in their log
    density (likelihood and prior), their filtered regime at the new bar, and the next
    return's mean and variance."""

    change: FloatArray  # [L]
    filtered: FloatArray  # [L, K]
    mean: FloatArray  # [L]
    var: FloatArray  # [L]


def step(ahead: Ahead, y: FloatArray, log_ratio: FloatArray, T: int, priors: Priors) -> Stepped:
    """At the bar: lanes `ahead` finished by their new returns y [L] (in the draws' units)
    and moved into the new window's units, log_ratio [L] = log r = log(s_old / s_new), for
    windows of T bars."""
    z = (y - ahead.mu) * ahead.inv_sigma
    log_e = ahead.log_norm - 0.5 * z * z
    top = log_e.max(axis=0)
    joint = ahead.prior * np.exp(log_e - top)
    total = joint.sum(axis=0)
    last = joint / total
    w = row_times(last, ahead.trans)  # the regime at the bar after
    mean = (w * ahead.mu).sum(axis=0)
    var = np.maximum((w * ahead.second).sum(axis=0) - mean * mean, 0.0)
    r = np.exp(log_ratio)
    change = (ahead.change + np.log(total) + top - T * log_ratio
              + moved_prior_change(ahead.mu, ahead.s1, log_ratio, priors))  # fmt: skip
    return Stepped(change, last.T, mean * r, var * (r * r))
