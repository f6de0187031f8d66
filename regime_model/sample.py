"""What an update's MCMC leaves for the next bar's reweighting (regime_model.reweigh),
per instrument: its window, its draws and their log densities there, its estimate and
bulk ESS, and its draws' filter over the window's last T-1 bars, which the bar finishes
by one step (regime_model.next_bar). Made between bars (service/worker/between_bars.py).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model.backend import Backend
from regime_model.diagnostics import bulk_ess
from regime_model.estimate import RegimeEstimate, decision_values, merge_rows
from regime_model.next_bar import Ahead, ahead_of, join
from regime_model.params import log_prior_value
from regime_model.scaling import robust_scale
from regime_model.spec import ModelSpec
from regime_model.types import FloatArray, IntArray


class Sample(NamedTuple):
    """What an update's MCMC leaves for the next bar's reweighting, per instrument: the
    window it sampled, its draws (scaled by that window's robust scale, chain-major: C
    chains of `spec.draws`), their log densities there, and its estimate."""

    returns: FloatArray  # [N, T]
    draws: list[FloatArray]  # [M_i, D]
    log_density: list[FloatArray]  # [M_i]
    estimate: RegimeEstimate
    # [N, 2] the decision quantities' bulk ESS over the chains on the sampled window: what
    # the reweighted errors divide by (times the weights' share). Estimating it again on
    # the new window, from the same chains, moved instruments that had just passed the
    # gate back over it by the estimate's own noise (docs/benchmarks.md, thirtieth session).
    ess: FloatArray
    # Each instrument's draws filtered over the window's last T-1 bars (None: no draws): a
    # window moved one bar on is reweighed by one step from it (regime_model.next_bar).
    ahead: list[Ahead | None]
    # {M: (rows, filters)}: the instruments of M draws that have a filter (ascending) and
    # their filters as one Ahead, of which `ahead`'s are views. The bar's step reads it as
    # it is where it steps all of them; joined there, the filters were copied at every
    # bar (0.5-0.6 ms of a trial account's 7-8 ms reweighing on a CPU). None: not joined.
    by_size: dict[int, tuple[IntArray, Ahead]] | None = None

    def joined(self) -> Sample:
        """This sample with `by_size` (one copy of the filters, between bars)."""
        if self.by_size is not None:
            return self
        sizes = np.array([0 if a is None else len(d) for d, a in zip(self.draws, self.ahead,
                                                                     strict=True)])  # fmt: skip
        ahead, by_size = list(self.ahead), {}
        for M in np.unique(sizes[sizes > 0]).tolist():
            rows = np.flatnonzero(sizes == M)
            whole = join([a for a in (self.ahead[r] for r in rows) if a is not None])
            for j, r in enumerate(rows):
                ahead[r] = whole.lanes(j * M, (j + 1) * M)
            by_size[M] = (rows, whole)
        return self._replace(ahead=ahead, by_size=by_size)

    def with_rows(self, rows: IntArray, part: Sample) -> Sample:
        """This sample with instruments `rows` replaced by `part`'s (in that order): the
        same windows, sampled again."""
        draws, density, ahead = list(self.draws), list(self.log_density), list(self.ahead)
        ess = self.ess.copy()
        for j, i in enumerate(rows):
            draws[i], density[i], ahead[i] = part.draws[j], part.log_density[j], part.ahead[j]
            ess[i] = part.ess[j]
        return Sample(self.returns, draws, density,
                      merge_rows(self.estimate, part.estimate, rows), ess, ahead)


def sample_of(
    returns: FloatArray, estimate: RegimeEstimate, draws: list[FloatArray], spec: ModelSpec,
    backend: Backend,
) -> Sample:
    """The Sample of an update's windows, estimate and final draws (RefreshInfo.draws),
    between bars: every draw filtered over its window, and over the window's last T-1 bars
    for the next bar's step (two passes, each window read once by its draws)."""
    returns = np.asarray(returns, dtype=np.float64)
    scaled = returns / robust_scale(returns)[:, None]
    density: list[FloatArray] = [np.empty(0)] * len(draws)
    ahead: list[Ahead | None] = [None] * len(draws)
    ess = np.zeros((len(draws), 2))
    by_size: dict[int, tuple[IntArray, Ahead]] = {}
    for g in filtered(draws, scaled, spec, backend):
        M = g.density.shape[1]
        kept = ahead_of(g.theta, scaled[g.rows], g.likelihood, spec.n_states, M, backend)
        by_size[M] = (g.rows, kept)
        for j, i in enumerate(g.rows):
            density[i], ahead[i] = g.density[j], kept.lanes(j * M, (j + 1) * M)
        q = decision_values(g.filtered, g.var)
        ess[g.rows] = bulk_ess(q.reshape(len(g.rows), -1, spec.draws, 2))
    # A quantity the same in every draw (P(turbulent) pinned at 0 or 1 in float64) has
    # no ESS (bulk_ess gives 0), and counted as one draw its reweighting, which the new bar
    # spreads, went to the bar's sampler every time (docs/benchmarks.md, thirty-fifth
    # session): the other quantity's says how the chains mix.
    ess = np.where(ess > 0, ess, ess[:, ::-1])
    return Sample(returns, draws, density, estimate, ess, ahead, by_size)


class Filtered(NamedTuple):
    """Instruments `rows` with M draws each: their draws' log densities on their windows
    and their predictive there, [n, M, ...]."""

    rows: IntArray  # [n] into the draws' list
    density: FloatArray  # [n, M]
    filtered: FloatArray  # [n, M, K]
    mean: FloatArray  # [n, M]
    var: FloatArray  # [n, M]
    theta: FloatArray  # [n M, D] the draws, as filtered
    likelihood: FloatArray  # [n M] the density's log likelihood alone


def filtered(
    draws: list[FloatArray], scaled: FloatArray, spec: ModelSpec, backend: Backend
) -> list[Filtered]:
    """Each instrument's draws' log densities on its scaled window (the forward filter's
    likelihood and the prior, with the transforms' Jacobians) and their predictive: one
    pass per distinct draw count, each window read once by its instrument's draws."""
    K, out = spec.n_states, []
    sizes = np.array([len(d) for d in draws])
    for size in np.unique(sizes[sizes > 0]):
        rows = np.flatnonzero(sizes == size)
        theta = np.concatenate([draws[i] for i in rows])
        pred, ll = backend.hmm_predictive_and_likelihood(theta, scaled[rows], K, int(size))
        lp = np.asarray(ll, dtype=np.float64) + log_prior_value(theta, K, spec.priors)
        n = len(rows)
        out.append(Filtered(rows, lp.reshape(n, -1),
                            np.asarray(pred.filtered_last).reshape(n, -1, K),
                            np.asarray(pred.mean).reshape(n, -1),
                            np.asarray(pred.var).reshape(n, -1),
                            theta, np.asarray(ll, dtype=np.float64)))  # fmt: skip
    return out
