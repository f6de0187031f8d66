"""Between bars: the instruments at risk of the next bar's gate, and how far each one's
sampler must run on there for its reweighting to pass it.

The bar reweighs an instrument's sample to the new window (regime_model.reweigh) and
sends it to the bar's sampler where the reweighted draws fail the gate that the sample
passed. Between bars the sample is reweighed to seven probe bars instead (one host step
each, regime_model.next_bar); an instrument one of them fails is at risk, and
service/worker/between_bars.py samples it again there, on to a share of the gate.

Which share: the probes' errors are the weighted spread over the sample's bulk ESS times
the weights' share, the sampler's the spread over the bulk ESS, so both fall as one over
the root of the ESS the run on buys, and the run must end with the sampler's errors at
SAFETY times its own over the worst probe's (per decision quantity, the smaller). Run on
to `at_risk_margin` of the gate alone, 16 of the 19 instruments the trial shape still
sent to the bar had run on and ended within 0.3-0.95 of the gate, their probes' errors
over it: a new bar near a regime change can widen P(turbulent)'s spread over the draws
several-fold (docs/benchmarks.md, thirty-fourth and thirty-fifth sessions).
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np

from regime_model.backend import Backend
from regime_model.estimate import RegimeEstimate, decision_mcse
from regime_model.reweigh import reweigh
from regime_model.sample import Sample
from regime_model.spec import ModelSpec
from regime_model.types import BoolArray, FloatArray, IntArray

# The probes' returns, in predictive sds from the next bar's mean: its 1, 5, 25, 50, 75,
# 95 and 99 % quantiles under a normal. With the 5 and 95 % tails alone the gate still
# sent 34 of 50 on the trial shape, with the middle three as well 19 (docs/benchmarks.md,
# thirty-fourth session): a bar near the mean, where P(turbulent) is least certain, can
# widen its spread the most. Two of the sends left came at bars 1.9 and 2.2 sds out
# (thirty-fifth session): the 1 and 99 % probes.
PROBES_Z = (-2.326, -1.645, -0.6745, 0.0, 0.6745, 1.645, 2.326)
# The run on ends with the worst probe's errors at this share of the gate: the probes
# are seven returns, the bar's is another.
SAFETY = 0.8
# The run-on's margins: at_risk_margin and LEVELS - 1 halvings of it (one sampler run
# each, so that an instrument that needs little does not run as long as one that needs
# much); one that needs less than the last runs to the last, or until its blocks are spent.
LEVELS = 3
# Blocks an instrument at risk may run on beyond `extend_max`: its margin can be a
# quarter of the gate's, and blocks join (a block adds its chains to the last's).
EXTRA_BLOCKS = 2
# The first block of the random streams an instrument whose update started cold runs on
# with, from the carries its cold run left: past any update's own blocks (extend_max is
# at most 8), so that its run does not reuse the numbers its cold run drew.
AFTER_COLD_BLOCK = 64


class Risk(NamedTuple):
    rows: IntArray  # the instruments at risk, ascending
    margin: FloatArray  # [len(rows)] the share of the gate each runs on to

    def only(self, keep: BoolArray) -> Risk:
        """These instruments where `keep` [N] holds."""
        mine = keep[self.rows]
        return Risk(self.rows[mine], self.margin[mine])

    def groups(self) -> list[tuple[float, IntArray]]:
        """(margin, rows) for each margin, the largest first: one sampler run each."""
        return [(float(m), self.rows[self.margin == m]) for m in np.unique(self.margin)[::-1]]


def at_risk(sample: Sample, spec: ModelSpec, backend: Backend) -> Risk:
    """The instruments whose draws pass the gate and whose reweighting to the next bar
    would not, were its return at one of the PROBES_Z quantiles of the sample's own
    predictive (the gate would send them to the bar's sampler), each with the share of
    the gate its sampler runs on to between bars."""
    N = len(sample.returns)
    out = np.zeros(N, dtype=bool)
    worst = np.zeros((N, 2))  # the probes' largest errors, as shares of the gate's bounds
    for z in PROBES_Z:
        bar = np.asarray(sample.estimate.pred_mean) + z * np.asarray(sample.estimate.pred_vol)
        probe = np.concatenate([sample.returns[:, 1:], bar[:, None]], axis=1)
        done = reweigh(sample, np.arange(N), probe, spec, backend)
        out |= done.by_gate
        worst = np.fmax(worst, _of_gate(done.estimate, spec))
    rows = np.flatnonzero(out)
    own, probed = _of_gate(sample.estimate, spec)[rows], worst[rows]
    # a quantity within the gate at every probe sets no need (a divergent probe fails by
    # its divergences, which no run on mends: at_risk_margin, as before)
    need = SAFETY * np.min(np.where(probed > 1, own / np.where(probed > 1, probed, 1.0),
                                    np.inf), axis=1)  # fmt: skip
    levels: FloatArray = spec.at_risk_margin * 0.5 ** np.arange(LEVELS, dtype=np.float64)
    fits = need[:, None] >= levels[None, :]  # the largest level at or below the need
    pick = np.where(fits.any(axis=1), np.argmax(fits, axis=1), LEVELS - 1)
    return Risk(rows, levels[pick])


def run_on_spec(spec: ModelSpec, margin: float) -> ModelSpec:
    """The sampler's spec for instruments at risk run on to `margin` of the gate."""
    return replace(spec.within(margin), extend_max=spec.extend_max + EXTRA_BLOCKS)


def _of_gate(estimate: RegimeEstimate, spec: ModelSpec) -> FloatArray:
    """[N, 2] both decision quantities' Monte Carlo errors as shares of the gate's bounds
    (NaN: not reweighed, which sets nothing)."""
    out: FloatArray = decision_mcse(estimate) / np.array([spec.mcse_max, spec.vol_mcse_max])
    return out
