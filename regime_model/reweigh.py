"""An update's draws reweighted to the next window: the bar's estimate when the sampler
ran between bars.

A worker that samples between bars (service/worker/between_bars.py) runs the update's
MCMC on window n after bar n's commit; at bar n+1 it only moves those draws to window
n+1 by importance sampling. Each draw's weight is its log posterior density on the new
window (the draw moved into the new window's scaled units: the means scale with the
robust scale, log sigma_0 shifts by its log ratio, a Jacobian that is the same for every
draw) less its density on the one it was drawn on. Where the window moved one bar on, as
it does at every bar, the new density is all but computed between bars: the filter the
sample left over the windows' shared T-1 bars, finished at the bar by one step on the
host (regime_model.next_bar); a window moved further is filtered again at the bar, every
draw over it. The estimate is the weighted means; its Monte Carlo errors are the
weighted spread over the sample's bulk ESS (its decision quantities' over the chains, on
its own window) times the weights' ESS share (Kish). An instrument is sampled at the bar
instead where its window did not move by a few whole bars, where the weights keep less
than MIN_SHARE of the draws, or where the draws passed the gate on their own window and
the reweighted ones do not. One bar's weights keep most
of the draws (docs/benchmarks.md, thirtieth session: a share of at least 0.42 over 864
synthetic instrument-bars, 0.21 once in the S&P 500's 2008 crash), and the estimate
differs from the bar's own MCMC by about two runs' Monte Carlo errors.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model.backend import Backend
from regime_model.estimate import RegimeEstimate, decision_values, passes_gate, take_rows
from regime_model.next_bar import join, step
from regime_model.sample import Sample, filtered
from regime_model.scaling import robust_scale
from regime_model.spec import ModelSpec
from regime_model.types import BoolArray, FloatArray, IntArray

MIN_SHARE = 0.25  # the weights' ESS as a share of the draws, below which the bar samples
MAX_SHIFT = 8  # bars: a window moved further than this (or not by whole bars) is sampled


class Reweighed(NamedTuple):
    estimate: RegimeEstimate  # every row; those `at_bar` are the sample's, to be replaced
    at_bar: BoolArray  # [N] the instruments the bar samples instead
    share: FloatArray  # [N] the weights' ESS share (NaN where not reweighed)
    why: dict[str, int]  # how many `at_bar` for each reason (WHY), the first that applies
    by_gate: BoolArray  # [N] those `at_bar` for the gate alone: their draws passed it


WHY = ("no_draws", "not_moved", "weights", "gate")


def shifts(before: FloatArray, now: FloatArray) -> IntArray:
    """[N] by how many bars each window moved (now[:-b] == before[b:]), 1..MAX_SHIFT;
    0 where it did not move that way (the bar samples it)."""
    T = before.shape[1]
    out = np.zeros(len(now), dtype=np.int64)
    for b in range(MAX_SHIFT, 0, -1):  # the smallest shift that fits wins
        if b < T:
            out = np.where(np.all(now[:, : T - b] == before[:, b:], axis=1), b, out)
    return out


def reweigh(
    sample: Sample, rows: IntArray, returns: FloatArray, spec: ModelSpec, backend: Backend
) -> Reweighed:
    """The estimate of instruments whose windows are `returns` [N, T], row i from the
    sample's row `rows[i]` (-1: none: sampled at the bar), by reweighting its draws."""
    returns = np.asarray(returns, dtype=np.float64)
    N = len(returns)
    rows = np.asarray(rows)
    moved = np.zeros(N, dtype=np.int64)
    have = np.flatnonzero(rows >= 0)
    moved[have] = shifts(sample.returns[rows[have]], returns[have])
    go = np.flatnonzero(moved > 0)
    estimate = take_rows(sample.estimate, np.where(rows >= 0, rows, 0))
    share = np.full(N, np.nan)
    at_bar = moved == 0
    why = {"no_draws": int((rows < 0).sum()), "not_moved": int(((rows >= 0) & at_bar).sum()),
           "weights": 0, "gate": 0}  # fmt: skip
    if not len(go):
        return Reweighed(estimate, at_bar, share, why, np.zeros(N, dtype=bool))
    scale_now, scale_then = robust_scale(returns[go]), robust_scale(sample.returns[rows[go]])
    ratio = scale_then / scale_now
    # a window one bar on is the sample's last T-1 bars and the new one: one step from the
    # filter the sample left (next_bar); any other shift, a pass over the whole window
    near = (moved[go] == 1) & np.array([sample.ahead[r] is not None for r in rows[go]])
    fields = {f: np.asarray(getattr(estimate, f)).copy() for f in _REWEIGHED}
    src = rows[go]
    groups = _stepped(sample, src, np.flatnonzero(near), returns[go, -1] / scale_then,
                      np.log(ratio), spec) + _refiltered(sample, src, np.flatnonzero(~near),
                      returns[go] / scale_now[:, None], ratio, spec, backend)  # fmt: skip
    for g in groups:
        at = go[g.rows]  # each group's instruments at once: [n, M] arrays
        w = np.exp(g.lw - g.lw.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        share[at] = 1.0 / (w.shape[1] * np.sum(w * w, axis=1))
        _fill(fields, at, w, share[at], g, scale_now[g.rows], sample.ess[rows[at]],
              estimate.divergences[at], spec)  # fmt: skip
    estimate = estimate._replace(**fields)
    passed_before = np.asarray(sample.estimate.converged)[np.where(rows >= 0, rows, 0)]
    weights = share < MIN_SHARE
    gate = passed_before & ~estimate.converged & ~weights & ~at_bar
    why.update(weights=int(weights.sum()), gate=int(gate.sum()))
    return Reweighed(estimate, at_bar | weights | gate, share, why, gate)


_REWEIGHED = ("regime_probs", "pred_mean", "pred_vol", "converged", "p_turbulent_sd",
              "p_turbulent_mcse", "vol_mcse")  # fmt: skip


class _Weighed(NamedTuple):
    """Instruments `rows` (into reweigh's moved ones) with M draws each: their draws' log
    weights on the new window and their predictive there, [n, M, ...]."""

    rows: IntArray
    lw: FloatArray  # [n, M]
    filtered: FloatArray  # [n, M, K]
    mean: FloatArray  # [n, M], the new window's scaled units
    var: FloatArray  # [n, M]


def _stepped(
    sample: Sample, src: IntArray, pick: IntArray, y: FloatArray, log_ratio: FloatArray,
    spec: ModelSpec,
) -> list[_Weighed]:
    """The instruments `pick` (sample rows src[pick]) one bar on, by one step from their
    sample's filter: y, log_ratio [len(src)] their new returns in the sample's units and
    log(s_old / s_new). No device call: host arithmetic on [K, draws] arrays."""
    K, T, out = spec.n_states, sample.returns.shape[1], []
    sizes = np.array([len(sample.draws[r]) for r in src[pick]], dtype=np.int64)
    for M in np.unique(sizes):
        these = pick[sizes == M]
        ready = (sample.by_size or {}).get(int(M))
        if ready is not None and np.array_equal(ready[0], src[these]):
            whole = ready[1]  # every instrument of M draws steps: their filters as joined
        else:
            whole = join([a for a in (sample.ahead[r] for r in src[these]) if a is not None])
        s = step(whole, np.repeat(y[these], M), np.repeat(log_ratio[these], M), T,
                 spec.priors)  # fmt: skip
        n = len(these)
        out.append(_Weighed(these, s.change.reshape(n, M), s.filtered.reshape(n, M, K),
                            s.mean.reshape(n, M), s.var.reshape(n, M)))  # fmt: skip
    return out


def _refiltered(
    sample: Sample, src: IntArray, pick: IntArray, scaled: FloatArray, ratio: FloatArray,
    spec: ModelSpec, backend: Backend,
) -> list[_Weighed]:
    """The instruments `pick` (sample rows src[pick]) by a pass of their moved draws over
    their scaled new windows (scaled, ratio [len(src)], as _stepped's)."""
    if not len(pick):
        return []
    K = spec.n_states
    draws = [_moved(sample.draws[src[i]], ratio[i], K) for i in pick]
    return [_Weighed(pick[g.rows], g.density - np.stack([sample.log_density[r]
                                                         for r in src[pick[g.rows]]]),
                     g.filtered, g.mean, g.var)
            for g in filtered(draws, scaled[pick], spec, backend)]  # fmt: skip


def _moved(theta: FloatArray, ratio: float, K: int) -> FloatArray:
    """Draws in units scaled by s_old, in units scaled by s_new (ratio = s_old / s_new)."""
    out = np.array(theta, dtype=np.float64)
    out[:, :K] *= ratio
    out[:, K] += np.log(ratio)
    return out


def _fill(
    fields: dict[str, FloatArray], rows: IntArray, w: FloatArray, share: FloatArray,
    g: _Weighed, scale: FloatArray, ess: FloatArray, divergences: IntArray, spec: ModelSpec,
) -> None:
    """The reweighed fields of `rows`, instruments of one draw count M: their weights
    w [n, M], their draws' predictive on the new window (g), their sample's bulk ESS [n, 2]
    and divergences."""
    pm = np.sum(w * g.mean, axis=1)
    pv = np.sum(w * (g.var + g.mean**2), axis=1) - pm * pm
    fields["regime_probs"][rows] = np.einsum("nm,nmk->nk", w, g.filtered)
    fields["pred_mean"][rows] = pm * scale
    fields["pred_vol"][rows] = np.sqrt(np.maximum(pv, 0.0)) * scale
    q = decision_values(g.filtered, g.var)
    centred = q - np.einsum("nm,nmj->nj", w, q)[:, None]
    sd = np.sqrt(np.maximum(np.einsum("nm,nmj->nj", w, centred**2), 0.0))  # [n, 2]
    mcse = np.where(sd > 0, sd / np.sqrt(np.fmax(ess * share[:, None], 1.0)), 0.0)
    fields["p_turbulent_sd"][rows], fields["p_turbulent_mcse"][rows] = sd[:, 0], mcse[:, 0]
    fields["vol_mcse"][rows] = mcse[:, 1]
    fields["converged"][rows] = passes_gate(mcse, divergences, w.shape[1] // spec.draws, spec)

