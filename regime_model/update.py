"""One model update for a batch of instruments: the daemon's single entry point.

All N instruments x C chains are lanes of one batched sampler run on the backend; cold
(no carry) and warm instruments mix freely (see `sampler`). Deterministic: the output is a
pure function of the arguments, bit for bit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from regime_model import rng
from regime_model.adaptation import regularised_variance
from regime_model.backend import Backend, ReturnsWindow, UpdateBatch
from regime_model.carry import (
    InstrumentCarry,
    carry_from_arrays,
    carry_problem,
    carry_to_arrays,
)
from regime_model.diagnostics import convergence, ebfmi
from regime_model.params import check_states, n_params
from regime_model.sampler import LaneStart, SamplerConfig, SampleResult
from regime_model.scaling import robust_scale
from regime_model.types import (
    BoolArray,
    FloatArray,
    IntArray,
    Priors,
    UIntArray,
)

__all__ = [
    "InstrumentCarry",
    "ModelSpec",
    "RefreshInfo",
    "RegimeEstimate",
    "build_batch",
    "carry_from_arrays",
    "carry_to_arrays",
    "refresh",
]

# Cold chains start at the prior's centre jittered by U(-1/2, 1/2) per coordinate: spread
# enough for R-hat to see chains that disagree, close enough to converge in a short warm-up.
INIT_JITTER = 0.5
COLD_STEP_SIZE = 0.1


@dataclass(frozen=True)
class ModelSpec:
    n_states: int = 2
    window: int = 256  # T returns per instrument
    chains: int = 4
    warmup_cold: int = 300  # iterations for an instrument with no carry
    warmup_warm: int = 15  # step-size re-adaptation when warm-started
    draws: int = 40  # kept draws per chain per update
    # With 4 chains x 40 draws, the worst of 2D rank R-hats of healthy chains lands at
    # 1.03-1.09 by sampling noise alone; 1.1 still flags stuck or multimodal chains.
    rhat_max: float = 1.1
    priors: Priors = field(default_factory=Priors)
    max_divergences: int = 2  # per instrument per update, over all chains
    target_accept: float = 0.8
    steps_min: int = 3
    steps_max: int = 6
    trajectory: str = "jitter"  # "chees": adapt each instrument's trajectory length

    def __post_init__(self) -> None:
        check_states(self.n_states)
        for name in ("window", "chains", "warmup_cold", "draws", "steps_min"):
            if getattr(self, name) < 1:
                raise ValueError(f"ModelSpec.{name} must be >= 1, got {getattr(self, name)}")
        if self.warmup_warm < 0 or self.steps_max < self.steps_min or self.draws < 4:
            raise ValueError("ModelSpec needs warmup_warm >= 0, steps_max >= steps_min, draws >= 4")
        if self.trajectory not in ("jitter", "chees"):
            raise ValueError(f"ModelSpec.trajectory: jitter or chees, not {self.trajectory!r}")
        if not 0.0 < self.target_accept < 1.0:
            raise ValueError(f"ModelSpec.target_accept must be in (0, 1), got {self.target_accept}")


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


class RefreshInfo(NamedTuple):
    gradient_evals: int  # batched value-and-gradient calls (each covers all N x C lanes)
    timings_ms: dict[str, float]


def _validate(
    returns: FloatArray,
    carries: Sequence[InstrumentCarry | None],
    keys: UIntArray,
    spec: ModelSpec,
) -> None:
    if returns.ndim != 2 or returns.shape[1] != spec.window:
        raise ValueError(
            f"returns must be [N, {spec.window}] (ModelSpec.window), got {returns.shape}"
        )
    if not np.isfinite(returns).all():
        bad = sorted(set(np.nonzero(~np.isfinite(returns))[0].tolist()))
        raise ValueError(f"returns of instruments {bad} are not finite; drop or repair those bars")
    if len(carries) != len(returns) or keys.shape != (len(returns),):
        raise ValueError(
            f"need one carry and one key per instrument: {len(returns)} instruments, "
            f"{len(carries)} carries, keys of shape {keys.shape}"
        )
    for i, carry in enumerate(carries):
        problem = (
            None if carry is None else carry_problem(carry, spec.chains, n_params(spec.n_states))
        )
        if problem:
            raise ValueError(f"carries[{i}] cannot warm-start this model: {problem}; pass None")


def _as_keys(instrument_keys: np.ndarray) -> UIntArray:
    keys = np.asarray(instrument_keys)
    if keys.dtype.kind not in "ui" or (keys.size and (keys.min() < 0 or keys.max() > 0xFFFFFFFF)):
        raise ValueError("instrument_keys must be integers in [0, 2**32)")
    return keys.astype(np.uint32)


def _streams(seed: int, seq: int, keys: UIntArray, chains: int) -> tuple[rng.Stream, rng.Stream]:
    """Each lane's stream, and the batch-wide one that draws the leapfrog step counts."""
    N = len(keys)
    lanes = rng.make_stream(
        seed, np.repeat(keys, chains), np.tile(np.arange(chains, dtype=np.uint32), N), seq
    )
    zero = np.zeros(1, dtype=np.uint32)
    return lanes, rng.make_stream(seed, zero, zero, seq)


def prior_centre(K: int, priors: Priors) -> FloatArray:
    """theta at the priors' centres: zero means, prior scales, P rows at the Dirichlet mean."""
    u = np.log(priors.alpha_move / priors.alpha_stay)
    return np.concatenate(
        [
            np.full(K, priors.mu_loc),
            [priors.log_sigma_loc],
            np.full(K - 1, priors.eta_loc),
            np.full(K * (K - 1), u),
        ]
    )


def _lane_start(
    carries: Sequence[InstrumentCarry | None], stream: rng.Stream, spec: ModelSpec
) -> LaneStart:
    C, D = spec.chains, n_params(spec.n_states)
    cold = np.repeat([c is None for c in carries], C)
    jitter = INIT_JITTER * (2.0 * rng.uniform(stream, 0, rng.Purpose.INIT, D) - 1.0)
    position = prior_centre(spec.n_states, spec.priors) + jitter
    step = np.full(len(cold), COLD_STEP_SIZE)
    inv_mass = np.ones((len(cold), D))
    for i, carry in enumerate(carries):
        if carry is not None:
            position[i * C : (i + 1) * C] = carry.position
            step[i * C : (i + 1) * C] = carry.step_size
            inv_mass[i * C : (i + 1) * C] = carry.inv_mass
    warmup = np.where(cold, spec.warmup_cold, spec.warmup_warm).astype(np.int64)
    return LaneStart(position, step, inv_mass, warmup, cold)


def _sampler_config(spec: ModelSpec) -> SamplerConfig:
    return SamplerConfig(
        spec.draws,
        spec.chains,
        spec.target_accept,
        spec.steps_min,
        spec.steps_max,
        spec.trajectory,
    )


class _Summary(NamedTuple):
    regime_probs: FloatArray
    pred_mean: FloatArray
    pred_vol: FloatArray
    decision_draws: FloatArray  # [N, C, S, 2]: P(most turbulent regime), log predictive sd


def _summarise(
    result: SampleResult, y: FloatArray, scale: FloatArray, spec: ModelSpec, backend: Backend
) -> _Summary:
    """Posterior means over all draws; the predictive sd by the law of total variance."""
    L, S, D = result.draws.shape
    N, K = len(scale), spec.n_states
    pred = result.predictive
    if pred is None:
        pred = backend.hmm_predictive(result.draws.reshape(L * S, D), np.repeat(y, S, axis=0), K)
    probs = pred.filtered_last.reshape(N, -1, K).mean(axis=1)
    mean = pred.mean.reshape(N, -1)
    pm = mean.mean(axis=1)
    pv = (pred.var.reshape(N, -1) + mean**2).mean(axis=1) - pm**2
    turbulent = pred.filtered_last[:, -1].reshape(N, spec.chains, -1)
    log_sd = 0.5 * np.log(np.maximum(pred.var, 1e-300)).reshape(N, spec.chains, -1)
    decision = np.stack([turbulent, log_sd], axis=-1)
    return _Summary(probs, pm * scale, np.sqrt(np.maximum(pv, 0.0)) * scale, decision)


def _carries(result: SampleResult, spec: ModelSpec) -> list[InstrumentCarry]:
    """Last draw and step size of every chain; the metric re-estimated from this update's
    draws, so a warm instrument's metric follows its drifting posterior."""
    C = spec.chains
    L, S, D = result.draws.shape
    per_instrument = result.draws.reshape(L // C, C * S, D)
    inv_mass = regularised_variance(per_instrument.var(axis=1, ddof=1), float(C * S))
    last = result.draws[:, -1]
    return [
        InstrumentCarry(
            last[i * C : (i + 1) * C].copy(),
            result.step_size[i * C : (i + 1) * C].copy(),
            inv_mass[i],
        )
        for i in range(L // C)
    ]


def build_batch(
    returns: np.ndarray,
    carries: Sequence[InstrumentCarry | None],
    instrument_keys: np.ndarray,
    seq: int,
    seed: int,
    spec: ModelSpec,
) -> tuple[UpdateBatch, FloatArray]:
    """`refresh`'s validated sampler input, and each instrument's return scale [N]."""
    returns = np.asarray(returns, dtype=np.float64)
    keys = _as_keys(instrument_keys)
    _validate(returns, carries, keys, spec)
    scale = robust_scale(returns)
    y = np.repeat(returns / scale[:, None], spec.chains, axis=0)
    stream, schedule = _streams(seed, seq, keys, spec.chains)
    start, config = _lane_start(carries, stream, spec), _sampler_config(spec)
    window = ReturnsWindow(returns, scale, spec.chains)
    batch = UpdateBatch(y, spec.n_states, spec.priors, start, stream, schedule, config, window)
    return batch, scale


def refresh(
    returns: np.ndarray,
    carries: Sequence[InstrumentCarry | None],
    instrument_keys: np.ndarray,
    seq: int,
    seed: int,
    spec: ModelSpec,
    backend: Backend,
) -> tuple[RegimeEstimate, list[InstrumentCarry], RefreshInfo]:
    """Refresh every instrument's posterior in one batch; carries[i] None = cold start."""
    batch, scale = build_batch(returns, carries, instrument_keys, seq, seed, spec)
    C, N, y = spec.chains, len(scale), batch.y
    result = backend.run_update(batch)
    t0 = time.perf_counter()
    draws = result.draws.reshape(N, C, spec.draws, -1)
    diag = convergence(draws)
    summary = _summarise(result, y, scale, spec, backend)
    # The gate is on what the strategy trades on. In a window that shows one regime only,
    # the unused state's parameters are weakly identified and their R-hat stays high
    # although every chain agrees on P(turbulent) and the predictive sd.
    rhat_decision = convergence(summary.decision_draws).rhat.max(axis=1)
    divergences = result.divergences.reshape(N, C).sum(axis=1)
    estimate = RegimeEstimate(
        *summary[:3],
        converged=(rhat_decision < spec.rhat_max) & (divergences <= spec.max_divergences),
        rhat=diag.rhat.max(axis=1),
        rhat_decision=rhat_decision,
        ess_bulk=diag.ess_bulk.min(axis=1),
        divergences=divergences,
        step_size=result.step_size.reshape(N, C).mean(axis=1),
        ess_tail=diag.ess_tail.min(axis=1),
        ebfmi=ebfmi(result.energy).reshape(N, C).min(axis=1),
        trajectory_length=result.trajectory_length.reshape(N, C).mean(axis=1),
    )
    timings = {**result.timings_ms, "summary": 1e3 * (time.perf_counter() - t0)}
    return estimate, _carries(result, spec), RefreshInfo(result.gradient_evals, timings)
