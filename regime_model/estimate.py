"""From one sampler run to what the strategy reads: the estimate, its diagnostics, carries.

Pure numerics over a SampleResult (the backend only for the predictive, when the run did
not bring it). `merge_rows` puts a re-run subset of instruments back into an estimate.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model import run_summary
from regime_model.adaptation import regularised_variance
from regime_model.backend import Backend
from regime_model.carry import InstrumentCarry
from regime_model.diagnostics import bulk_ess, convergence, ebfmi, rank_rhat
from regime_model.readings import shift_acceptance
from regime_model.sampler import SampleResult
from regime_model.spec import ModelSpec
from regime_model.types import BoolArray, FloatArray, IntArray, PredictiveBatch


class RegimeEstimate(NamedTuple):
    """Per instrument, leading axis N."""

    regime_probs: FloatArray  # [N, K] posterior mean of filtered P(regime at last bar)
    pred_mean: FloatArray  # [N] posterior predictive mean of next log return, input units
    pred_vol: FloatArray  # [N] posterior predictive sd of next log return, input units
    converged: BoolArray  # [N] decision R-hat and divergences within bounds
    rhat: FloatArray  # [N] worst split R-hat over parameters (a diagnostic)
    rhat_decision: FloatArray  # [N] worst split R-hat of what the strategy uses
    ess_bulk: FloatArray  # [N] worst bulk ESS
    divergences: IntArray  # [N]
    step_size: FloatArray  # [N] mean adapted step size
    ess_tail: FloatArray  # [N] worst tail ESS
    ebfmi: FloatArray  # [N] lowest E-BFMI over the chains
    trajectory_length: FloatArray  # [N] mean integration time (step size x leapfrog steps)
    acceptance: FloatArray  # [N] mean acceptance rate over the chains' draws (target 0.8)
    # [N] posterior sd of P(most turbulent regime at the last bar) over all draws: the
    # uncertainty of the number the strategy trades on, for the operator's charts
    p_turbulent_sd: FloatArray
    # [N] Monte Carlo standard errors of what the strategy trades on (sd / sqrt(bulk ESS)):
    # the posterior mean of P(turbulent), and the mean log predictive sd (a relative error
    # of the predictive sd, which sizes the position). The gate is on these two.
    p_turbulent_mcse: FloatArray
    vol_mcse: FloatArray
    # [N] the level-shift move's mean acceptance at the draws (regime_model.readings):
    # above spec.two_readings the window has two readings and the update runs on
    shift_acceptance: FloatArray


class _Summary(NamedTuple):
    regime_probs: FloatArray
    pred_mean: FloatArray
    pred_vol: FloatArray
    decision_draws: FloatArray  # [N, C, S, 2]: P(most turbulent regime), log predictive sd


def decision_values(filtered_last: FloatArray, var: FloatArray) -> FloatArray:
    """[..., 2] the decision quantities of draws' predictive (filtered_last [..., K], var
    [...]): P(most turbulent regime) and the log predictive sd."""
    return np.stack([filtered_last[..., -1], 0.5 * np.log(np.maximum(var, 1e-300))], axis=-1)


def _decision_draws(pred: PredictiveBatch, N: int, C: int) -> FloatArray:
    """[N, C, S, 2]: the decision quantities at every draw."""
    return decision_values(pred.filtered_last, pred.var).reshape(N, C, -1, 2)


def passes_gate(
    mcse: FloatArray, divergences: IntArray, chains: int | IntArray, spec: ModelSpec
) -> BoolArray:
    """[N] the convergence gate: both decision quantities' Monte Carlo errors (mcse [N, 2])
    within spec's bounds, and at most `divergence_rate_max` of each instrument's chains x
    `spec.draws` draws divergent."""
    allowed = spec.divergence_rate_max * np.asarray(chains) * spec.draws
    out: BoolArray = ((mcse[:, 0] <= spec.mcse_max) & (mcse[:, 1] <= spec.vol_mcse_max)
                      & (divergences <= allowed))
    return out


def decision_mcse(estimate: RegimeEstimate) -> FloatArray:
    """[N, 2] the decision quantities' Monte Carlo errors, as passes_gate takes them."""
    out: FloatArray = np.stack([estimate.p_turbulent_mcse, estimate.vol_mcse], axis=1)
    return out


def take_rows(estimate: RegimeEstimate, rows: IntArray) -> RegimeEstimate:
    """The estimate of instruments `rows` (in that order)."""
    return RegimeEstimate._make(np.asarray(field)[rows] for field in estimate)


def _summarise(
    result: SampleResult, y: FloatArray, scale: FloatArray, spec: ModelSpec, backend: Backend
) -> _Summary:
    """Posterior means over all draws; the predictive sd by the law of total variance."""
    L, S, D = result.draws.shape
    N, K = len(scale), spec.n_states
    pred = result.predictive
    if pred is None:
        pred = backend.hmm_predictive(result.draws.reshape(L * S, D), y, K, draws_per_row=S)
    probs = pred.filtered_last.reshape(N, -1, K).mean(axis=1)
    mean = pred.mean.reshape(N, -1)
    pm = mean.mean(axis=1)
    pv = (pred.var.reshape(N, -1) + mean**2).mean(axis=1) - pm**2
    decision = _decision_draws(pred, N, spec.chains)
    return _Summary(probs, pm * scale, np.sqrt(np.maximum(pv, 0.0)) * scale, decision)


class _Reduced(NamedTuple):
    """What estimate_of reads of a run's draws beyond the per-lane scalars."""

    summary: _Summary
    ess: FloatArray  # [N, 2] the decision quantities' bulk ESS
    spread: FloatArray  # [N, 2] their sd over all draws
    carries: list[InstrumentCarry]


def _reduce(
    result: SampleResult, y: FloatArray, scale: FloatArray, spec: ModelSpec, backend: Backend
) -> _Reduced:
    """The run's summary: the device's (run_summary) where it made one for every
    instrument, else computed here from the draws (the reference)."""
    N, K, C = len(scale), spec.n_states, spec.chains
    device = run_summary.usable(result.summary, C, K)
    if device is None or result.predictive is None:
        summary = _summarise(result, y, scale, spec, backend)
        decision = summary.decision_draws
        # The gate reads the decision quantities' bulk ESS alone: their tail ESS is never
        # read, and their R-hat is a diagnostic (estimate_of), so one sort of each
        # quantity's draws does. Their R-hat took a third to a half of the gate's time at
        # 268 instruments (docs/bench-results/host_micro.py, nineteenth session).
        return _Reduced(summary, bulk_ess(decision), decision.reshape(N, -1, 2).std(axis=1),
                        carries_of(result, spec))  # fmt: skip
    pv = device.pred_second - device.pred_mean**2
    summary = _Summary(device.regime_probs, device.pred_mean * scale,
                       np.sqrt(np.maximum(pv, 0.0)) * scale,
                       _decision_draws(result.predictive, N, C))  # fmt: skip
    return _Reduced(summary, device.ess, device.spread,
                    carries_of(result, spec, device.draw_var))  # fmt: skip


def carries_of(
    result: SampleResult, spec: ModelSpec, draw_var: FloatArray | None = None
) -> list[InstrumentCarry]:
    """Last draw and step size of every chain; the metric re-estimated from this update's
    draws (their variance per instrument `draw_var` [N, D] where the device computed it),
    so a warm instrument's metric follows its drifting posterior."""
    C = spec.chains
    L, S, D = result.draws.shape
    if draw_var is None:
        draw_var = result.draws.reshape(L // C, C * S, D).var(axis=1, ddof=1)
    inv_mass = regularised_variance(draw_var, float(C * S))
    # one copy of every chain's last draw and step size; each carry holds its rows of them
    last = result.draws[:, -1].reshape(L // C, C, D).copy()
    step = result.step_size.reshape(L // C, C).copy()
    return list(map(InstrumentCarry, last, step, inv_mass))


def _shift_acceptance(
    result: SampleResult, draws: FloatArray, y: FloatArray, spec: ModelSpec, backend: Backend
) -> FloatArray:
    """[N] the level-shift move's mean acceptance probability: the run's own, over every
    chain's sampling transitions, where it made the move (no further work); else the
    move tested at the draws (regime_model.readings, one batched density call)."""
    if result.shift_rate is not None:
        rate: FloatArray = result.shift_rate.reshape(len(draws), -1).mean(axis=1)
        return rate
    return shift_acceptance(draws, y, spec.n_states, spec.priors, backend)


def parameter_diagnostics(
    result: SampleResult, spec: ModelSpec
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """[N] each instrument's worst split R-hat, bulk ESS and tail ESS over its parameters.

    Apart from the gate's diagnostics: an update runs them only for the run that gives an
    instrument its final estimate (update.refresh), not for a run whose instruments run
    on. Each instrument's diagnostics are its own draws' alone, so they are the same bits
    in any batch (tests/regime_model/test_regime_diagnostics.py)."""
    C = spec.chains
    N = len(result.draws) // C
    diag = convergence(result.draws.reshape(N, C, spec.draws, -1))
    return diag.rhat.max(axis=1), diag.ess_bulk.min(axis=1), diag.ess_tail.min(axis=1)


def decision_rhat(decision_draws: FloatArray) -> FloatArray:
    """[N] the worst rank-normalised split R-hat of the decision quantities [N, C, S, 2]."""
    out: FloatArray = rank_rhat(decision_draws).max(axis=1)
    return out


class Estimated(NamedTuple):
    """What estimate_of makes of a run."""

    estimate: RegimeEstimate
    carries: list[InstrumentCarry]  # where each instrument's next update starts
    decision_draws: FloatArray  # [N, C, S, 2]: what decision_rhat reads


def estimate_of(
    result: SampleResult,
    y: FloatArray,
    scale: FloatArray,
    spec: ModelSpec,
    backend: Backend,
    diagnose: bool = True,
) -> Estimated:
    """The estimate of every instrument of the run, and the carries its next update starts
    from; `diagnose` False leaves the diagnostics the gate does not read (rhat, ess_bulk,
    ess_tail: parameter_diagnostics; rhat_decision: decision_rhat) NaN, for the caller to
    fill once it knows which run's estimate it keeps."""
    C, N = spec.chains, len(scale)
    draws = result.draws.reshape(N, C, spec.draws, -1)
    summary, ess, spread, carries = _reduce(result, y, scale, spec, backend)
    # The gate is on what the strategy trades on, and on how well this update knows it:
    # the Monte Carlo error of each decision quantity, whose bulk ESS counts chains that
    # disagree (between-chain variance) as well as chains that move slowly. R-hat stays a
    # diagnostic: on P(turbulent) pinned near 0 or 1 it flags chains that agree to the
    # third decimal, and with 4 chains x 40 draws it cannot tell 20 % from 0 % of them in
    # the other reading (docs/benchmarks.md, "... a gate on the Monte Carlo error ...").
    # Draws that all agree have no Monte Carlo error (their ESS is 0 / 0); an ESS that is
    # not a number otherwise counts as one draw's worth (fmax ignores the NaN).
    mcse = np.where(spread > 0, spread / np.sqrt(np.fmax(ess, 1.0)), 0.0)
    divergences = result.divergences.reshape(N, C).sum(axis=1)
    undiagnosed = np.full(N, np.nan)
    rhat, ess_bulk, ess_tail = (parameter_diagnostics(result, spec) if diagnose
                                else (undiagnosed, undiagnosed.copy(), undiagnosed.copy()))
    estimate = RegimeEstimate(
        *summary[:3],
        converged=passes_gate(mcse, divergences, C, spec),
        rhat=rhat,
        rhat_decision=decision_rhat(summary.decision_draws) if diagnose else undiagnosed.copy(),
        ess_bulk=ess_bulk,
        divergences=divergences,
        step_size=result.step_size.reshape(N, C).mean(axis=1),
        ess_tail=ess_tail,
        ebfmi=ebfmi(result.energy).reshape(N, C).min(axis=1),
        trajectory_length=result.trajectory_length.reshape(N, C).mean(axis=1),
        acceptance=result.acceptance.reshape(N, C).mean(axis=1),
        p_turbulent_sd=spread[:, 0],
        p_turbulent_mcse=mcse[:, 0],
        vol_mcse=mcse[:, 1],
        shift_acceptance=_shift_acceptance(result, draws, y[::C], spec, backend),
    )
    return Estimated(estimate, carries, summary.decision_draws)


def merge_rows(base: RegimeEstimate, part: RegimeEstimate, rows: IntArray) -> RegimeEstimate:
    """`base` with the instruments at `rows` replaced by `part`'s (in that order)."""
    n = len(base.converged)
    return gather_rows([(base, np.arange(n)), (part, np.asarray(rows))], n)


def gather_rows(parts: list[tuple[RegimeEstimate, IntArray]], n: int) -> RegimeEstimate:
    """One estimate of n instruments from parts that each cover the rows given."""
    fields = []
    for k in range(len(RegimeEstimate._fields)):
        first = np.asarray(parts[0][0][k])
        out = np.empty((n, *first.shape[1:]), dtype=first.dtype)
        for part, rows in parts:
            out[rows] = part[k]
        fields.append(out)
    return RegimeEstimate(*fields)
