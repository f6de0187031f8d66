"""Warm-up step size, per lane: dual averaging to find the scale, then a search for the root.

Dual averaging (Hoffman & Gelman 2014, Stan's constants) explores around 10x the step
after each (re)start and finds the right scale fast, but its iterates keep a constant
spread (about 0.4 in log step on our posteriors), and the acceptance at their log-space
average is higher than their mean acceptance (Jensen's inequality on a concave curve):
0.94-0.95 realised against a target of 0.8, on S&P 500 and in the daemon, until
2026-12-01. So the last part of a warm-up is a Robbins-Monro search on log step,
log eps += GAIN (accept - target) / (n + T0)^KAPPA, whose iterate converges to the step at
which the MEAN acceptance is the target. A cold lane searches from dual averaging's
average over its terminal buffer (after the last metric window); a warm lane, whose carried
step is already near the root, searches over its whole warm-up. docs/validation-history.md
has the figures.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model.types import BoolArray, FloatArray

GAMMA, T0_DA, KAPPA_DA = 0.05, 10.0, 0.75
# Dual averaging explores around mu = log(10 * eps) after a (re)start, as Stan does: a
# larger step is cheap to reject and shrinks fast, a too-small one wastes gradients.
MU_FACTOR = 10.0
# The search's gain starts at GAIN / (1 + T0)^KAPPA = 0.52 and decays: about -0.4 in log
# step for a rejected first iteration, +0.1 for an accepted one. KAPPA < 1 decays slowly
# enough to reach the root from afar (Robbins-Monro: the gains' sum infinite, their squares'
# finite). (1.0, 0.6, 5) and (1.5, 0.6, 10) gave the same acceptance
# (docs/validation-history.md).
GAIN, T0, KAPPA = 2.0, 5.0, 0.75


class DualAveraging(NamedTuple):
    log_step: FloatArray  # [L] the iterate used for the next transition
    log_step_avg: FloatArray  # [L] the averaged iterate, where the search starts
    h_avg: FloatArray  # [L] running mean of (target - acceptance)
    n: FloatArray  # [L] updates since the last (re)start
    mu: FloatArray  # [L] shrinkage point


class StepSearch(NamedTuple):
    log_step: FloatArray  # [L] the step in use, and the warm-up's result when it ends
    n: FloatArray  # [L] updates since the search began


def dual_averaging_start(step_size: FloatArray) -> DualAveraging:
    L = len(step_size)
    zeros = np.zeros(L)
    log_step = np.log(step_size)
    return DualAveraging(
        log_step, log_step.copy(), zeros, zeros.copy(), np.log(MU_FACTOR) + log_step
    )


def dual_averaging_update(
    da: DualAveraging, acceptance: FloatArray, target: float, mask: BoolArray
) -> DualAveraging:
    count = da.n + 1.0
    h_avg = (1 - 1 / (count + T0_DA)) * da.h_avg + (target - acceptance) / (count + T0_DA)
    log_step = da.mu - np.sqrt(count) / GAMMA * h_avg
    weight = count**-KAPPA_DA
    log_avg = weight * log_step + (1 - weight) * da.log_step_avg
    new = DualAveraging(log_step, log_avg, h_avg, count, da.mu)
    return DualAveraging(*(np.where(mask, n, o) for n, o in zip(new, da, strict=True)))


def restart_where(da: DualAveraging, mask: BoolArray) -> DualAveraging:
    fresh = dual_averaging_start(np.exp(da.log_step))
    return DualAveraging(*(np.where(mask, f, o) for f, o in zip(fresh, da, strict=True)))


def search_start(log_step: FloatArray) -> StepSearch:
    return StepSearch(np.array(log_step, dtype=np.float64), np.zeros(len(log_step)))


def search_update(
    search: StepSearch, acceptance: FloatArray, target: float, mask: BoolArray
) -> StepSearch:
    count = search.n + 1.0
    log_step = search.log_step + GAIN * (acceptance - target) / (count + T0) ** KAPPA
    return StepSearch(np.where(mask, log_step, search.log_step), np.where(mask, count, search.n))


def search_from(search: StepSearch, da: DualAveraging, mask: BoolArray) -> StepSearch:
    """Lanes in `mask` begin their search at dual averaging's average."""
    return StepSearch(
        np.where(mask, da.log_step_avg, search.log_step), np.where(mask, 0.0, search.n)
    )
