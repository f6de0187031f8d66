"""Warm-up adaptation, per lane: dual-averaging step size and windowed diagonal mass.

Step size: Nesterov dual averaging toward a target acceptance rate (Hoffman & Gelman 2014,
Stan's constants). Inverse mass: the pooled variance of one instrument's chains over
doubling windows (Stan's slow windows), shrunk toward 1e-3 like Stan so a short window
cannot produce a degenerate metric. Lanes are ordered instrument-major, C chains each.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model.types import BoolArray, FloatArray

GAMMA, T0, KAPPA = 0.05, 10.0, 0.75
# Dual averaging explores around mu = log(10 * eps) after a (re)start, as Stan does: a
# larger step is cheap to reject and shrinks fast, a too-small one wastes gradients.
MU_FACTOR = 10.0


class DualAveraging(NamedTuple):
    log_step: FloatArray  # [L] the iterate used for the next transition
    log_step_avg: FloatArray  # [L] the averaged iterate, used once warm-up ends
    h_avg: FloatArray  # [L] running mean of (target - acceptance)
    n: FloatArray  # [L] updates since the last (re)start
    mu: FloatArray  # [L] shrinkage point


class Welford(NamedTuple):
    n: FloatArray  # [L]
    mean: FloatArray  # [L, D]
    m2: FloatArray  # [L, D]


class Schedule(NamedTuple):
    """Per-lane warm-up plan over the batch's warm-up iterations, [L, W] (or [W] for one lane)."""

    adapting: BoolArray  # step size adapts at this iteration
    collect: BoolArray  # the draw after this iteration feeds the mass window
    window_end: BoolArray  # the mass window closes after this iteration
    warmup_end: BoolArray  # last warm-up iteration: freeze the averaged step size


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
    h_avg = (1 - 1 / (count + T0)) * da.h_avg + (target - acceptance) / (count + T0)
    log_step = da.mu - np.sqrt(count) / GAMMA * h_avg
    weight = count**-KAPPA
    log_avg = weight * log_step + (1 - weight) * da.log_step_avg
    new = DualAveraging(log_step, log_avg, h_avg, count, da.mu)
    return DualAveraging(*(np.where(mask, n, o) for n, o in zip(new, da, strict=True)))


def restart_where(da: DualAveraging, mask: BoolArray) -> DualAveraging:
    fresh = dual_averaging_start(np.exp(da.log_step))
    return DualAveraging(*(np.where(mask, f, o) for f, o in zip(fresh, da, strict=True)))


def welford_empty(L: int, D: int) -> Welford:
    return Welford(np.zeros(L), np.zeros((L, D)), np.zeros((L, D)))


def welford_add(w: Welford, x: FloatArray, mask: BoolArray) -> Welford:
    count = w.n + mask
    delta = np.where(mask[:, None], x - w.mean, 0.0)
    mean = w.mean + delta / np.maximum(count, 1.0)[:, None]
    return Welford(count, mean, w.m2 + delta * (x - mean))


def pooled_inv_mass(w: Welford, chains: int) -> FloatArray:
    """Regularised variance of each instrument's pooled chains, broadcast back to lanes."""
    D = w.mean.shape[1]
    n = w.n.reshape(-1, chains, 1)
    mean_c, m2_c = w.mean.reshape(-1, chains, D), w.m2.reshape(-1, chains, D)
    total = n.sum(axis=1)
    mean = (n * mean_c).sum(axis=1) / np.maximum(total, 1.0)
    m2 = (m2_c + n * (mean_c - mean[:, None]) ** 2).sum(axis=1)
    var = m2 / np.maximum(total - 1.0, 1.0)
    return np.repeat(regularised_variance(var, total), chains, axis=0)


def regularised_variance(var: FloatArray, n: FloatArray | float) -> FloatArray:
    """Stan's shrinkage of a metric estimated from n draws toward 1e-3."""
    return (n / (n + 5.0)) * var + 1e-3 * (5.0 / (n + 5.0))


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
    plan = np.zeros((4, total), dtype=bool)
    plan[0, offset:] = True
    for start, stop in mass_windows(warmup) if adapt_mass else []:
        plan[1, offset + start : offset + stop] = True
        plan[2, offset + stop - 1] = True
    if warmup:
        plan[3, total - 1] = True
    return Schedule(*plan)
