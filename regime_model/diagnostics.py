"""Convergence diagnostics batched over instruments (Vehtari, Gelman, Simpson, Carpenter
and Buerkner 2021): rank-normalised split R-hat (bulk and folded) and bulk ESS.

Draws come as [N, C, S, D]: instruments, chains, draws, parameters. Each chain is split in
half, draws are replaced by the normal scores of their pooled ranks (ties share their
average rank: HMC repeats a position whenever it rejects), and the classic formulas run
on those scores. Tail ESS is the smaller ESS of the indicators of the 5 % and 95 %
quantiles; E-BFMI (Betancourt 2016) compares energy jumps with the energy's spread.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from regime_model.types import FloatArray, IntArray


class Convergence(NamedTuple):
    rhat: FloatArray  # [N, D] max of bulk and folded rank-normalised split R-hat
    ess_bulk: FloatArray  # [N, D]
    ess_tail: FloatArray  # [N, D]


# Acklam's rational approximation of the normal quantile (relative error < 1.2e-9),
# ample for rank scores and free of scipy.
_A = (
    -3.969683028665376e01,
    2.209460984245205e02,
    -2.759285104469687e02,
    1.383577518672690e02,
    -3.066479806614716e01,
    2.506628277459239e00,
)
_B = (
    -5.447609879822406e01,
    1.615858368580409e02,
    -1.556989798598866e02,
    6.680131188771972e01,
    -1.328068155288572e01,
)
_C = (
    -7.784894002430293e-03,
    -3.223964580411365e-01,
    -2.400758277161838e00,
    -2.549732539343734e00,
    4.374664141464968e00,
    2.938163982698783e00,
)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)
_P_LOW = 0.02425


def _poly(coefs: tuple[float, ...], x: FloatArray) -> FloatArray:
    out = np.full_like(x, coefs[0])
    for c in coefs[1:]:
        out = out * x + c
    return out


def normal_quantile(p: FloatArray) -> FloatArray:
    """Phi^{-1}(p) for p in (0, 1)."""
    q = p - 0.5
    r = q * q
    out: FloatArray = q * _poly(_A, r) / (_poly(_B, r) * r + 1.0)
    tails = np.abs(q) > 0.5 - _P_LOW  # a few percent of the values: evaluate them alone
    pt = p[tails]
    t = np.sqrt(-2.0 * np.log(np.minimum(pt, 1.0 - pt)))
    tail = _poly(_C, t) / (_poly(_D, t) * t + 1.0)
    out[tails] = np.where(pt < 0.5, tail, -tail)
    return out


def average_ranks(x: FloatArray) -> FloatArray:
    """1-based ranks along the last axis, ties given the mean of the ranks they span."""
    out: FloatArray = (_rank_index(*_sorted(x)) + 2) / 2.0
    return out


def _sorted(x: FloatArray) -> tuple[FloatArray, IntArray]:
    """x sorted along its last axis, and the order that sorts it. Any sort will do for the
    ranks: the members of a tie share one rank, whatever their order."""
    order = np.argsort(x, axis=-1)
    return np.take_along_axis(x, order, axis=-1), order


def _rank_index(v: FloatArray, order: IntArray) -> IntArray:
    """2 x average rank - 2 of every element (an integer: the 0-based positions of the
    first and last member of its tie, added), at its place before the sort, from the
    sorted values v and the order that sorts them."""
    n = v.shape[-1]
    idx = np.arange(n)
    new = np.ones(v.shape, dtype=bool)
    np.not_equal(v[..., 1:], v[..., :-1], out=new[..., 1:])
    first = np.maximum.accumulate(np.where(new, idx, 0), axis=-1)
    last_new = np.ones(v.shape, dtype=bool)
    last_new[..., :-1] = new[..., 1:]
    last = np.minimum.accumulate(np.where(last_new, idx, n)[..., ::-1], axis=-1)[..., ::-1]
    # Scattered back through flat indices: put_along_axis builds an index per axis and
    # took twice as long on the wide groups' draws (docs/benchmarks.md, thirteenth session).
    rows = np.arange(v.size // n).reshape(*v.shape[:-1], 1) * n
    out = np.empty(v.size, dtype=np.intp)
    out[(order + rows).ravel()] = (first + last).ravel()
    return out.reshape(v.shape)


@functools.lru_cache(maxsize=16)
def _scores(n: int) -> FloatArray:
    """The normal score of every possible average rank of n pooled draws (1, 1.5, ..., n),
    indexed by 2 x rank - 2: ranks are half-integers, so the quantile function runs on
    2n - 1 values once per draw count instead of on every draw of every update."""
    ranks = np.arange(2, 2 * n + 1) / 2.0
    out = normal_quantile((ranks - 0.375) / (n + 0.25))
    out.flags.writeable = False
    return out


def _split(draws: FloatArray) -> FloatArray:
    """[..., C, S] -> [..., 2C, S//2]: the first and second half of every chain."""
    half = draws.shape[-1] // 2
    head, tail = draws[..., :half], draws[..., draws.shape[-1] - half :]
    return np.concatenate([head, tail], axis=-2)


def _normal_scores(v: FloatArray, order: IntArray) -> FloatArray:
    """Normal scores of the pooled ranks of x [..., P], given its sort (v, order)."""
    out: FloatArray = _scores(v.shape[-1])[_rank_index(v, order)]
    return out


def _sorted_quantile(v: FloatArray, q: float) -> FloatArray:
    """np.quantile(x, q, axis=-1) (its default, linear interpolation) from x sorted along
    the last axis, with numpy's own arithmetic, so the result is the same to the bit."""
    virtual = (v.shape[-1] - 1) * np.float64(q)
    below = int(np.floor(virtual))
    above = min(below + 1, v.shape[-1] - 1)
    gamma = virtual - below
    a, b = v[..., below], v[..., above]
    diff = b - a
    out: FloatArray = b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma
    return out


def _sorted_median(v: FloatArray) -> FloatArray:
    """np.median(x, axis=-1) from x sorted along the last axis (the same bits)."""
    h = v.shape[-1] // 2
    out: FloatArray = v[..., h] if v.shape[-1] % 2 else (v[..., h - 1] + v[..., h]) / 2.0
    return out


def _rhat(chains: FloatArray) -> FloatArray:
    n = chains.shape[-1]
    means = chains.mean(axis=-1)
    between = n * means.var(axis=-1, ddof=1)
    within = chains.var(axis=-1, ddof=1).mean(axis=-1)
    var_plus = (n - 1) / n * within + between / n
    with np.errstate(invalid="ignore", divide="ignore"):  # constant chains give 0/0
        return np.where(within > 0, np.sqrt(var_plus / within), np.inf)


def _mean_autocovariance(chains: FloatArray) -> FloatArray:
    """Biased autocovariance of each chain, averaged over chains, [..., M, n] -> [..., n].

    Lag by lag: the chains are short (a few dozen draws), where this is several times
    faster than an FFT per chain.
    """
    n = chains.shape[-1]
    centred = chains - chains.mean(axis=-1, keepdims=True)
    acov = np.empty((*chains.shape[:-2], n))
    for k in range(n):
        acov[..., k] = np.einsum("...mt,...mt->...", centred[..., : n - k], centred[..., k:])
    out: FloatArray = acov / (n * chains.shape[-2])
    return out


# The most ESS credited per draw (_ess); None: Stan's log10 of the draw count. Read at
# each call, so that docs/bench-results/ess_calibration.py can run both in one process.
ESS_MOST_PER_DRAW: float | None = 1.0


def _ess(chains: FloatArray) -> FloatArray:
    """Stan's multi-chain ESS with Geyer's initial positive, monotone sequence.

    Autocorrelations are summed in adjacent pairs while the pair sums stay positive, each
    pair capped by the one before it; the short odd tail Stan adds is omitted.

    Unlike Stan (up to log10 of the draw count times the draws), no ESS above the number
    of draws is credited. HMC's draws can be antithetic, but from half-chains of 20 draws
    (the daemon's 4 x 40) a negative lag-1 estimate is mostly noise, and crediting it made
    the gate's Monte Carlo error about a quarter too small: with this cap the error in
    units of the reported MCSE falls from 1.22-1.29 to 1.08-1.15 (median |z| / 0.6745 on
    three synthetic series; 1.00-1.06 at 4 x 400 draws), docs/benchmarks.md, "The gate's
    Monte Carlo error ...", docs/bench-results/ess_calibration.py. What no cap mends: an
    instrument whose autocorrelation outlasts 20 lags looks better mixed than it is (the
    slowest of 268: 0.111 ESS per draw from 4 x 40, 0.046 from 4 x 1,000).
    """
    M, n = chains.shape[-2:]
    acov = _mean_autocovariance(chains)
    within = chains.var(axis=-1).mean(axis=-1) * n / (n - 1)
    var_plus = within * (n - 1) / n + chains.mean(axis=-1).var(axis=-1, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = 1.0 - (within[..., None] - acov) / var_plus[..., None]
    rho[..., 0] = 1.0
    pairs = rho[..., 0 : 2 * (n // 2) : 2] + rho[..., 1 : 2 * (n // 2) : 2]
    positive = np.logical_and.accumulate(pairs > 0, axis=-1)
    monotone = np.minimum.accumulate(np.where(positive, pairs, np.inf), axis=-1)
    tau = -1.0 + 2.0 * np.where(positive, monotone, 0.0).sum(axis=-1)
    total = M * n
    most = np.log10(total) if ESS_MOST_PER_DRAW is None else ESS_MOST_PER_DRAW
    ess = total / np.maximum(tau, 1.0 / most)
    return np.where(np.isfinite(var_plus) & (var_plus > 0), ess, 0.0)


def _ranked(draws: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Draws [N, C, S, D] as split chains [N, D, 2C, S//2], each parameter's pooled draws
    sorted [N, D, 2C x S//2], and the chains' normal scores (z, the chains' shape)."""
    chains = _split(np.moveaxis(draws, -1, 1))
    shape = chains.shape
    v, order = _sorted(chains.reshape(*shape[:-2], -1))
    return chains, v, _normal_scores(v, order).reshape(shape)


def _worst_rhat(chains: FloatArray, v: FloatArray, z: FloatArray) -> FloatArray:
    """The larger of the bulk and the folded rank-normalised split R-hat, from _ranked."""
    shape = chains.shape
    folded = np.abs(chains - _sorted_median(v)[..., None, None]).reshape(v.shape)
    zf = _normal_scores(*_sorted(folded)).reshape(shape)
    rhat = _rhat(np.stack([z, zf]))
    out: FloatArray = np.maximum(rhat[0], rhat[1])
    return out


def convergence(draws: FloatArray) -> Convergence:
    """Per-parameter rank-normalised split R-hat, bulk and tail ESS for draws [N, C, S, D].

    One sort of each parameter's pooled draws gives its ranks, its median and the 5 % and
    95 % quantiles the tail ESS needs; the three ESS and the two R-hat run as one batch
    each. The update runs this on every instrument at every bar, so it is kept to a few
    whole-array passes. Each ESS is its own slice's alone: the bulk ESS is the same bits
    as `bulk_ess`'s, the R-hat as `rank_rhat`'s.
    """
    chains, v, z = _ranked(draws)
    indicators = [(chains <= _sorted_quantile(v, q)[..., None, None]) for q in (0.05, 0.95)]
    ess = _ess(np.stack([z, *(i.astype(np.float64) for i in indicators)]))
    return Convergence(_worst_rhat(chains, v, z), ess[0], np.minimum(ess[1], ess[2]))


def bulk_ess(draws: FloatArray) -> FloatArray:
    """[N, D] convergence(draws).ess_bulk alone: one sort per parameter and no R-hat, for
    the gate, which reads the bulk ESS on the update's critical path (estimate.py)."""
    return _ess(_ranked(draws)[2])


def rank_rhat(draws: FloatArray) -> FloatArray:
    """[N, D] convergence(draws).rhat alone."""
    return _worst_rhat(*_ranked(draws))


def ebfmi(energy: FloatArray) -> FloatArray:
    """E-BFMI of each chain, energy [..., S] -> [...]; below 0.3 signals poor exploration."""
    jumps = (np.diff(energy, axis=-1) ** 2).sum(axis=-1)
    spread = ((energy - energy.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):  # a constant energy gives 0/0
        out: FloatArray = np.where(spread > 0, jumps / spread, 0.0)
    return out
