"""ChEES trajectory-length adaptation (Hoffman, Radul and Sountsov 2021), per instrument.

The trajectory length T maximises the expected change in the squared distance of the
chains from their centre (the "change in the estimator of the expected square"): long
enough to decorrelate, no longer. Its gradient needs several chains of the same target,
so an instrument's chains share one T; each lane then runs ceil(u T / eps) leapfrog steps
with its own jitter u ~ U(0, 1) and its own step size eps (lanes run masked, see `hmc`).
Distances are measured in the metric (positions divided by sqrt(inverse mass)) so that
the criterion does not depend on the units of the coordinates. The update is Adam with
no momentum on log T; warm-up ends on the geometric running mean of the iterates.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model import rng
from regime_model.hmc import HMCInfo
from regime_model.types import BoolArray, FloatArray, IntArray

LEARNING_RATE = 0.05
DECAY = 0.95  # of Adam's second-moment average
AVERAGE = 0.9  # weight of the past in the running mean of log T


class ChEES(NamedTuple):
    log_length: FloatArray  # [L] iterate used for the next transition
    log_length_avg: FloatArray  # [L] running mean, used once warm-up ends
    second_moment: FloatArray  # [L]
    n: FloatArray  # [L] updates so far


def chees_start(length: FloatArray) -> ChEES:
    log_length = np.log(length)
    zeros = np.zeros(len(length))
    return ChEES(log_length, log_length.copy(), zeros, zeros.copy())


def jitter(stream: rng.Stream, iteration: int) -> FloatArray:
    """[L] the fraction u of T that each lane's trajectory covers at this iteration."""
    return rng.uniform(stream, iteration, rng.Purpose.SCHEDULE, 1)[:, 0]


def lane_steps(
    length: FloatArray, step_size: FloatArray, u: FloatArray, max_steps: int
) -> IntArray:
    steps = np.ceil(u * length / step_size)
    out: IntArray = np.clip(np.nan_to_num(steps, nan=1.0), 1, max_steps).astype(np.int64)
    return out


def _by_instrument(x: FloatArray, chains: int) -> FloatArray:
    return x.reshape(-1, chains, *x.shape[1:])


def gradient(
    start: FloatArray, info: HMCInfo, inv_mass: FloatArray, u: FloatArray, chains: int
) -> FloatArray:
    """d ChEES / d log T [L] (equal within an instrument), acceptance-weighted over chains."""
    scale = np.sqrt(inv_mass)
    z0, z1 = _by_instrument(start / scale, chains), _by_instrument(info.proposal / scale, chains)
    velocity = _by_instrument(scale * info.proposal_momentum, chains)
    c0 = z0 - z0.mean(axis=1, keepdims=True)
    c1 = z1 - z1.mean(axis=1, keepdims=True)
    diff = (c1**2).sum(axis=2) - (c0**2).sum(axis=2)
    lengths = _by_instrument(u, chains)  # d x' / d log T = u T v'; T is applied in `update`
    per_chain = diff * (c1 * velocity).sum(axis=2) * lengths
    weight = _by_instrument(info.acceptance_rate, chains)
    ok = np.isfinite(per_chain) & (weight > 0)
    total = np.where(ok, weight * per_chain, 0.0).sum(axis=1)
    mean = total / np.maximum(np.where(ok, weight, 0.0).sum(axis=1), 1e-12)
    return np.repeat(mean, chains)


def update(c: ChEES, grad: FloatArray, step_size: FloatArray, mask: BoolArray) -> ChEES:
    """One Adam (beta1 = 0) ascent step on log T where `mask`; T stays above one step."""
    g = grad * np.exp(c.log_length)  # the chain rule's T, factored out of `gradient`
    n = c.n + 1.0
    v = DECAY * c.second_moment + (1.0 - DECAY) * g**2
    v_hat = v / (1.0 - DECAY**n)
    step = LEARNING_RATE * g / (np.sqrt(v_hat) + 1e-12)
    log_length = np.maximum(c.log_length + step, np.log(step_size))
    avg = AVERAGE * c.log_length_avg + (1.0 - AVERAGE) * log_length
    new = ChEES(log_length, avg, v, n)
    return ChEES(*(np.where(mask, a, b) for a, b in zip(new, c, strict=True)))
