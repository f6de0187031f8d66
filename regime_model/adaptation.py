"""Warm-up adaptation, per lane: the windowed mass matrix and the warm-up's plan.

Inverse mass: per coordinate, the median over one instrument's chains of each chain's
window variance, over doubling windows (Stan's slow windows), shrunk toward 1e-3 like Stan
so a short window cannot produce a degenerate metric. A chain stranded far below its
instrument's best chain restarts from it before the metric windows end. The step size is
`step_size`'s. Lanes are ordered instrument-major, C chains each.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model.types import BoolArray, FloatArray, IntArray


class Welford(NamedTuple):
    n: FloatArray  # [L]
    mean: FloatArray  # [L, D]
    m2: FloatArray  # [L, D]


class Schedule(NamedTuple):
    """Per-lane warm-up plan over the batch's warm-up iterations, [L, W] (or [W] for one lane)."""

    adapting: BoolArray  # step size adapts at this iteration
    collect: BoolArray  # the draw after this iteration feeds the mass window
    window_end: BoolArray  # the mass window closes after this iteration
    search: BoolArray  # the step follows the root search (step_size.py), not dual averaging
    regroup: BoolArray  # stranded chains restart from their instrument's best after this


def welford_empty(L: int, D: int) -> Welford:
    return Welford(np.zeros(L), np.zeros((L, D)), np.zeros((L, D)))


def welford_add(w: Welford, x: FloatArray, mask: BoolArray) -> Welford:
    count = w.n + mask
    delta = np.where(mask[:, None], x - w.mean, 0.0)
    mean = w.mean + delta / np.maximum(count, 1.0)[:, None]
    return Welford(count, mean, w.m2 + delta * (x - mean))


def pooled_inv_mass(w: Welford, chains: int) -> FloatArray:
    """Each instrument's metric from its chains' window draws, broadcast back to lanes.

    Per coordinate, the MEDIAN over the instrument's chains of each chain's own (within-
    chain) window variance, regularised with the pooled draw count. Unlike the total
    variance of the pooled chains, a chain still in transit toward the mode (large
    within-chain variance, far-off mean) cannot inflate the metric of the settled ones,
    and one locked chain (tiny variance) cannot shrink it; for settled chains the median
    of within-chain variances estimates the same posterior variance as the pooled one.
    """
    D = w.mean.shape[1]
    n = w.n.reshape(-1, chains, 1)
    var_c = w.m2.reshape(-1, chains, D) / np.maximum(n - 1.0, 1.0)
    var = np.median(var_c, axis=1)
    total = n.sum(axis=1)
    return np.repeat(regularised_variance(var, total), chains, axis=0)


def regularised_variance(var: FloatArray, n: FloatArray | float) -> FloatArray:
    """Stan's shrinkage of a metric estimated from n draws toward 1e-3."""
    return (n / (n + 5.0)) * var + 1e-3 * (5.0 / (n + 5.0))


def stranded(logdensity: FloatArray, chains: int, mask: BoolArray, dim: int) -> IntArray:
    """For each lane, the lane it restarts from: the instrument's highest-density chain if
    the lane is `mask`ed and its log density lies so far below that chain's that both cannot
    be in one typical set, else itself.

    Twice the gap to the mode is ~ chi-square(D) in the typical set; a gap above
    (D + 12 sqrt(2 D)) / 2 (~ 8 sd of the gap between two settled chains) means a chain
    stranded in a minor mode (hmm_drive_1: log density 12,600 below the others), which a
    Metropolis-corrected sampler can never leave. Stan would leave it there too and R-hat
    would fail; restarting it before the metric windows end lets warm-up still adapt it.
    """
    L = len(logdensity)
    gap = 0.5 * (dim + 12.0 * np.sqrt(2.0 * dim))
    lp = np.where(np.isfinite(logdensity), logdensity, -np.inf).reshape(-1, chains)
    best = lp.argmax(axis=1) + chains * np.arange(lp.shape[0])
    donor = np.repeat(best, chains)
    lane: IntArray = np.where(mask & (logdensity < lp.ravel()[donor] - gap), donor, np.arange(L))
    return lane


def mass_windows(warmup: int) -> list[tuple[int, int]]:
    """Stan's slow windows for a warm-up of this length: (start, end) pairs, end exclusive.

    15% initial fast buffer, 10% terminal buffer, windows doubling from 25 in between; the
    last window stretches to the terminal buffer. Too short a warm-up adapts no metric.
    """
    init_buf, term_buf = int(0.15 * warmup), int(0.1 * warmup)
    start, size, end = init_buf, 25, warmup - term_buf
    windows: list[tuple[int, int]] = []
    while start + size <= end:
        stop = end if start + 3 * size > end else start + size
        windows.append((start, stop))
        start, size = stop, 2 * size
    return windows


def lane_schedule(warmup: int, adapt_mass: bool, total: int) -> Schedule:
    """One lane's plan within a batch warm-up of `total` iterations: its own warm-up
    occupies the LAST `warmup` of them, just before sampling starts.

    Aligning every lane's warm-up to end at the same iteration lets cold and warm lanes
    share a batch: a warm lane simply idles (frozen) while cold lanes begin adapting.
    """
    offset = total - warmup
    plan = np.zeros((5, total), dtype=bool)
    plan[0, offset:] = True
    windows = mass_windows(warmup) if adapt_mass else []
    for start, stop in windows:
        plan[1, offset + start : offset + stop] = True
        plan[2, offset + stop - 1] = True
    if windows:
        # After the fast buffer and every metric window but the last (which leaves too
        # little warm-up to re-adapt after a restart).
        for stop in [windows[0][0]] + [stop for _, stop in windows[:-1]]:
            plan[4, offset + stop - 1] = True
    # A warm lane searches from its carried step; a cold one over the second half of its
    # terminal buffer (at least its last iteration), from the average dual averaging
    # reached in the first half with the final metric.
    plan[3, (total - max(1, int(0.1 * warmup) // 2)) if adapt_mass else offset :] = True
    return Schedule(*plan)
