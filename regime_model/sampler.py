"""Batched, adaptive HMC: warm-up then sampling for lanes = instruments x chains.

The driver knows nothing of the model: it sees a LogDensityFn (and the map of a move
before every transition, if the caller gives one: jump_move). Lanes are instrument-major
(lane = instrument * chains + chain) so an instrument's chains can pool their warm-up
draws into one mass matrix. All lanes advance in lockstep; a lane whose own
warm-up is shorter than the batch's stays frozen until its warm-up begins, so cold and
warm instruments share one batch and every lane's result depends on its inputs alone.

Trajectory lengths: "jitter" draws one leapfrog step count per iteration, uniform on
[steps_min, steps_max], shared by every lane (the jitter breaks the resonances of a fixed
length); "chees" adapts each instrument's length in warm-up and lets lanes differ.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from regime_model import adaptation, chees, hmc, rng, step_size
from regime_model.jump_move import JumpFn, transition
from regime_model.transition_keys import TransitionKeys
from regime_model.types import (
    BoolArray,
    FloatArray,
    IntArray,
    LogDensityFn,
    PredictiveBatch,
    Progress,
)


class SamplerConfig(NamedTuple):
    draws: int
    chains: int
    target_accept: float = 0.8
    steps_min: int = 3  # "jitter": leapfrog steps uniform on [steps_min, steps_max]
    steps_max: int = 7
    trajectory: str = "jitter"  # or "chees"
    max_steps: int = 64  # cap on one lane's leapfrog steps under "chees"
    shift_moves: bool = False  # the model's level-shift move before every transition
    # Longest step the warm-up may adapt to: the split integrator's quarter period (fit).
    max_step_size: float = float("inf")


class LaneStart(NamedTuple):
    position: FloatArray  # [L, D]
    step_size: FloatArray  # [L]
    inv_mass: FloatArray  # [L, D]
    warmup: IntArray  # [L] warm-up iterations of each lane
    adapt_mass: BoolArray  # [L] whether the lane's warm-up re-estimates its metric
    # [L] "chees" only: the starting trajectory length (None: step_size x mean jitter steps)
    trajectory_length: FloatArray | None = None


class SampleResult(NamedTuple):
    draws: FloatArray  # [L, S, D]
    divergences: IntArray  # [L] during sampling
    acceptance: FloatArray  # [L] mean acceptance rate during sampling
    step_size: FloatArray  # [L] adapted
    inv_mass: FloatArray  # [L, D] used during sampling
    gradient_evals: int  # batched log-density calls
    timings_ms: dict[str, float]
    energy: FloatArray  # [L, S] Hamiltonian at each draw, for E-BFMI
    trajectory_length: FloatArray  # [L] integration time used while sampling
    mean_steps: FloatArray  # [L] mean leapfrog steps per draw
    # At every draw ([L * S] lanes, draw-minor), when the backend computed it with the draws
    # (the device sampler does, in the same submission); None: the caller asks for it.
    predictive: PredictiveBatch | None = None
    shift_rate: FloatArray | None = None  # [L] the move's mean acceptance (readings); None: no move
    # [L, run_summary.width] the lane's instrument's summary, where the device computed it
    # beside the draws (regime_model.run_summary); None: estimate_of computes it
    summary: FloatArray | None = None


class _Warmup(NamedTuple):
    schedule: adaptation.Schedule
    da: step_size.DualAveraging
    search: step_size.StepSearch
    window: adaptation.Welford
    inv_mass: FloatArray
    step_size: FloatArray
    chees: chees.ChEES


def step_counts(
    schedule_stream: rng.Stream, iterations: IntArray, config: SamplerConfig
) -> IntArray:
    """`num_steps` of every iteration in `iterations`, in one vectorised draw."""
    u = rng.first_uniforms(schedule_stream, iterations, rng.Purpose.SCHEDULE)
    span = config.steps_max - config.steps_min + 1
    counts: IntArray = config.steps_min + (u * span).astype(np.int64)
    return counts


def _plan(start: LaneStart, total: int) -> adaptation.Schedule:
    rows = [
        adaptation.lane_schedule(int(w), bool(m), total)
        for w, m in zip(start.warmup, start.adapt_mass, strict=True)
    ]
    return adaptation.Schedule(*(np.stack(parts) for parts in zip(*rows, strict=True)))


def _initial_length(start: LaneStart, cfg: SamplerConfig) -> FloatArray:
    if start.trajectory_length is not None:
        return np.asarray(start.trajectory_length, dtype=np.float64).copy()
    length: FloatArray = start.step_size * 0.5 * (cfg.steps_min + cfg.steps_max)
    return length


def _warmup_begin(start: LaneStart, total: int, cfg: SamplerConfig) -> _Warmup:
    L, D = start.position.shape
    return _Warmup(
        _plan(start, total),
        step_size.dual_averaging_start(start.step_size),
        step_size.search_start(np.log(start.step_size)),
        adaptation.welford_empty(L, D),
        start.inv_mass.copy(),
        start.step_size.copy(),
        chees.chees_start(_initial_length(start, cfg)),
    )


class _Step(NamedTuple):
    """One transition's outcome and what adaptation needs to know about it."""

    start: FloatArray  # [L, D] positions the transition started from
    info: hmc.HMCInfo
    jitter: FloatArray  # [L] trajectory fraction ("chees"), ones for "jitter"
    shift_rate: FloatArray  # [L] the move's acceptance probability (zeros: no move)


def _adapt(w: _Warmup, outcome: _Step, state: hmc.HMCState, i: int, cfg: SamplerConfig) -> _Warmup:
    sched, info = w.schedule, outcome.info
    ch = w.chees
    if cfg.trajectory == "chees":
        grad = chees.gradient(outcome.start, info, w.inv_mass, outcome.jitter, cfg.chains)
        ch = chees.update(ch, grad, w.step_size, sched.adapting[:, i])
    adapting, searching = sched.adapting[:, i], sched.search[:, i]
    rate, target = info.acceptance_rate, cfg.target_accept
    da = step_size.dual_averaging_update(w.da, rate, target, adapting & ~searching)
    search = step_size.search_update(w.search, rate, target, searching)
    window = adaptation.welford_add(w.window, state.position, sched.collect[:, i])
    inv_mass = w.inv_mass
    ends = sched.window_end[:, i]
    if ends.any():
        inv_mass = np.where(ends[:, None], adaptation.pooled_inv_mass(window, cfg.chains), inv_mass)
        window = hmc.select(ends, adaptation.welford_empty(*state.position.shape), window)
        da = step_size.restart_where(da, ends)
    if i + 1 < sched.search.shape[1]:
        search = step_size.search_from(search, da, sched.search[:, i + 1] & ~searching)
        searching = searching | sched.search[:, i + 1]
    step = np.where(
        searching,
        np.exp(search.log_step),
        np.where(adapting, np.exp(da.log_step), w.step_size),
    )
    step = np.minimum(step, cfg.max_step_size)
    return _Warmup(sched, da, search, window, inv_mass, step, ch)


class _Loop(NamedTuple):
    fn: LogDensityFn
    stream: rng.Stream
    keys: TransitionKeys
    steps: IntArray  # "jitter": every iteration's step count, warm-up first
    config: SamplerConfig
    total_warmup: int
    progress: Progress | None = None
    jump: JumpFn | None = None

    def tick(self, done: int) -> None:
        if self.progress is not None:
            self.progress(done, self.total_warmup + self.config.draws)


def _transition(
    loop: _Loop,
    i: int,
    state: hmc.HMCState,
    params: hmc.HMCParams,
    length: FloatArray,
    active: BoolArray | None = None,
) -> tuple[hmc.HMCState, _Step]:
    """One transition; under "chees" lanes not `active` (frozen in warm-up) take one step."""
    # Iterations are counted from the start of sampling so a lane's random stream does not
    # depend on how long the other lanes of its batch warm up.
    it = i - loop.total_warmup
    key = loop.keys.key(it)
    cfg = loop.config
    if cfg.trajectory == "chees":
        u = chees.jitter(loop.stream, it)
        steps = chees.lane_steps(length, params.step_size, u, cfg.max_steps)
        steps = steps if active is None else np.where(active, steps, 1)
    else:
        u = np.ones(len(length))
        steps = np.full(len(length), loop.steps[i])
    done = transition(loop.jump, loop.fn, loop.stream, it, state, key, params, steps)
    return done.end, _Step(done.start.position, done.info, u, done.shift_rate)


def _run_warmup(
    loop: _Loop, state: hmc.HMCState, start: LaneStart
) -> tuple[hmc.HMCState, _Warmup, int]:
    w = _warmup_begin(start, loop.total_warmup, loop.config)
    evals = 0
    for i in range(loop.total_warmup):
        params = hmc.HMCParams(w.step_size, w.inv_mass)
        active = w.schedule.adapting[:, i]
        new, step = _transition(loop, i, state, params, np.exp(w.chees.log_length), active)
        state = hmc.select(active, new, state)
        w = _adapt(w, step, state, i, loop.config)
        regroup = w.schedule.regroup[:, i]
        if regroup.any():
            state, w = _regroup(state, w, regroup, loop.config.chains)
        evals += step.info.num_steps + (loop.jump is not None)
        loop.tick(i + 1)
    return state, w, evals


def _regroup(
    state: hmc.HMCState, w: _Warmup, mask: BoolArray, chains: int
) -> tuple[hmc.HMCState, _Warmup]:
    """Restart stranded chains (see adaptation.stranded) from their instrument's best chain:
    its position and its step-size adaptation; the metric is the instrument's already."""
    donor = adaptation.stranded(state.logdensity, chains, mask, state.position.shape[1])
    state = hmc.HMCState(*(x[donor] for x in state))
    da = step_size.DualAveraging(*(x[donor] for x in w.da))
    search = step_size.StepSearch(*(x[donor] for x in w.search))
    return state, w._replace(da=da, search=search, step_size=w.step_size[donor])


class _Draws(NamedTuple):
    draws: FloatArray  # [L, S, D]
    divergences: IntArray  # [L]
    acceptance: FloatArray  # [L]
    energy: FloatArray  # [L, S]
    steps: FloatArray  # [L] mean leapfrog steps
    shift_rate: FloatArray  # [L] mean acceptance probability of the move
    evals: int


def _run_sampling(
    loop: _Loop, state: hmc.HMCState, params: hmc.HMCParams, length: FloatArray
) -> _Draws:
    L, D = state.position.shape
    S = loop.config.draws
    zeros = np.zeros
    out = _Draws(np.empty((L, S, D)), zeros(L, np.int64), zeros(L), np.empty((L, S)), zeros(L),
                 zeros(L), 0)  # fmt: skip
    evals = 0
    for s in range(S):
        state, step = _transition(loop, loop.total_warmup + s, state, params, length)
        out.draws[:, s] = state.position
        out.energy[:, s] = step.info.energy
        out.divergences[:] += step.info.is_divergent
        out.acceptance[:] += step.info.acceptance_rate / S
        out.steps[:] += step.info.lane_steps / S
        out.shift_rate[:] += step.shift_rate / S
        evals += step.info.num_steps + (loop.jump is not None)
        loop.tick(loop.total_warmup + s + 1)
    return out._replace(evals=evals)


def sample(
    logdensity_fn: LogDensityFn,
    start: LaneStart,
    stream: rng.Stream,
    schedule_stream: rng.Stream,
    config: SamplerConfig,
    progress: Progress | None = None,
    jump: JumpFn | None = None,
) -> SampleResult:
    """Warm up every lane for its own length (aligned to end together), then draw; with
    a `jump`, its move before every transition (see the module's docstring)."""
    if config.shift_moves != (jump is not None):
        raise ValueError("SamplerConfig.shift_moves needs the model's jump map, and only it does")
    warmup = int(start.warmup.max(initial=0))
    steps = step_counts(schedule_stream, np.arange(-warmup, config.draws), config)
    keys = TransitionKeys(stream, start.position.shape[1])
    loop = _Loop(logdensity_fn, stream, keys, steps, config, warmup, progress, jump)
    t0 = time.perf_counter()
    state = hmc.init(start.position, logdensity_fn)
    state, w, warm_evals = _run_warmup(loop, state, start)
    t1 = time.perf_counter()
    params = hmc.HMCParams(w.step_size, w.inv_mass)
    length = np.exp(w.chees.log_length_avg if loop.total_warmup else w.chees.log_length)
    out = _run_sampling(loop, state, params, length)
    t2 = time.perf_counter()
    timings = {"warmup": 1e3 * (t1 - t0), "sampling": 1e3 * (t2 - t1)}
    used = length if config.trajectory == "chees" else out.steps * w.step_size
    return SampleResult(
        out.draws, out.divergences, out.acceptance, w.step_size, w.inv_mass,
        1 + warm_evals + out.evals, timings, out.energy, used, out.steps,
        shift_rate=out.shift_rate if jump is not None else None,
    )  # fmt: skip
