"""Batched, adaptive HMC: warm-up then sampling for lanes = instruments x chains.

The driver knows nothing of the model: it sees a LogDensityFn. Lanes are ordered
instrument-major (lane = instrument * chains + chain) so an instrument's chains can pool
their warm-up draws into one mass matrix. All lanes advance in lockstep; a lane whose own
warm-up is shorter than the batch's stays frozen until its warm-up begins, so cold and
warm instruments share one batch and every lane's result depends on its inputs alone.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from regime_model import adaptation, hmc, rng
from regime_model.types import BoolArray, FloatArray, IntArray, LogDensityFn


class SamplerConfig(NamedTuple):
    draws: int
    chains: int
    target_accept: float = 0.8
    # Leapfrog steps per transition, uniform on [steps_min, steps_max] and shared by all
    # lanes at one iteration (lockstep); jitter breaks the resonances of a fixed length.
    steps_min: int = 3
    steps_max: int = 7


class LaneStart(NamedTuple):
    position: FloatArray  # [L, D]
    step_size: FloatArray  # [L]
    inv_mass: FloatArray  # [L, D]
    warmup: IntArray  # [L] warm-up iterations of each lane
    adapt_mass: BoolArray  # [L] whether the lane's warm-up re-estimates its metric


class SampleResult(NamedTuple):
    draws: FloatArray  # [L, S, D]
    divergences: IntArray  # [L] during sampling
    acceptance: FloatArray  # [L] mean acceptance rate during sampling
    step_size: FloatArray  # [L] adapted
    inv_mass: FloatArray  # [L, D] used during sampling
    gradient_evals: int  # batched log-density calls
    timings_ms: dict[str, float]


class _Warmup(NamedTuple):
    schedule: adaptation.Schedule
    da: adaptation.DualAveraging
    window: adaptation.Welford
    inv_mass: FloatArray
    step_size: FloatArray


def num_steps(schedule_stream: rng.Stream, iteration: int, config: SamplerConfig) -> int:
    u = rng.uniform(schedule_stream, iteration, rng.Purpose.SCHEDULE, 1)[0, 0]
    return config.steps_min + int(u * (config.steps_max - config.steps_min + 1))


def _plan(start: LaneStart, total: int) -> adaptation.Schedule:
    rows = [
        adaptation.lane_schedule(int(w), bool(m), total)
        for w, m in zip(start.warmup, start.adapt_mass, strict=True)
    ]
    return adaptation.Schedule(*(np.stack(parts) for parts in zip(*rows, strict=True)))


def _warmup_begin(start: LaneStart, total: int) -> _Warmup:
    L, D = start.position.shape
    return _Warmup(
        _plan(start, total),
        adaptation.dual_averaging_start(start.step_size),
        adaptation.welford_empty(L, D),
        start.inv_mass.copy(),
        start.step_size.copy(),
    )


def _adapt(
    w: _Warmup, info: hmc.HMCInfo, state: hmc.HMCState, i: int, cfg: SamplerConfig
) -> _Warmup:
    sched = w.schedule
    da = adaptation.dual_averaging_update(
        w.da, info.acceptance_rate, cfg.target_accept, sched.adapting[:, i]
    )
    window = adaptation.welford_add(w.window, state.position, sched.collect[:, i])
    inv_mass = w.inv_mass
    ends = sched.window_end[:, i]
    if ends.any():
        inv_mass = np.where(ends[:, None], adaptation.pooled_inv_mass(window, cfg.chains), inv_mass)
        empty = adaptation.welford_empty(*state.position.shape)
        window = adaptation.Welford(
            *(np.where(_col(ends, o), e, o) for e, o in zip(empty, window, strict=True))
        )
        da = adaptation.restart_where(da, ends)
    done = sched.warmup_end[:, i]
    step = np.where(
        done,
        np.exp(da.log_step_avg),
        np.where(sched.adapting[:, i], np.exp(da.log_step), w.step_size),
    )
    return _Warmup(sched, da, window, inv_mass, step)


def _col(mask: BoolArray, like: FloatArray) -> BoolArray:
    return mask if like.ndim == 1 else mask[:, None]


def _select(mask: BoolArray, new: hmc.HMCState, old: hmc.HMCState) -> hmc.HMCState:
    return hmc.HMCState(*(np.where(_col(mask, o), n, o) for n, o in zip(new, old, strict=True)))


class _Loop(NamedTuple):
    fn: LogDensityFn
    stream: rng.Stream
    schedule_stream: rng.Stream
    config: SamplerConfig
    total_warmup: int


def _transition(
    loop: _Loop, i: int, state: hmc.HMCState, params: hmc.HMCParams
) -> tuple[hmc.HMCState, hmc.HMCInfo]:
    # Iterations are counted from the start of sampling so a lane's random stream does not
    # depend on how long the other lanes of its batch warm up.
    it = i - loop.total_warmup
    key = hmc.Key(loop.stream, it)
    return hmc.step(key, state, params, loop.fn, num_steps(loop.schedule_stream, it, loop.config))


def _run_warmup(
    loop: _Loop, state: hmc.HMCState, start: LaneStart
) -> tuple[hmc.HMCState, _Warmup, int]:
    w = _warmup_begin(start, loop.total_warmup)
    evals = 0
    for i in range(loop.total_warmup):
        new, info = _transition(loop, i, state, hmc.HMCParams(w.step_size, w.inv_mass))
        state = _select(w.schedule.adapting[:, i], new, state)
        w = _adapt(w, info, state, i, loop.config)
        evals += info.num_steps
    return state, w, evals


def _run_sampling(
    loop: _Loop, state: hmc.HMCState, params: hmc.HMCParams
) -> tuple[FloatArray, IntArray, FloatArray, int]:
    L, D = state.position.shape
    S = loop.config.draws
    draws = np.empty((L, S, D))
    divergences = np.zeros(L, dtype=np.int64)
    acceptance = np.zeros(L)
    evals = 0
    for s in range(S):
        state, info = _transition(loop, loop.total_warmup + s, state, params)
        draws[:, s] = state.position
        divergences += info.is_divergent
        acceptance += info.acceptance_rate / S
        evals += info.num_steps
    return draws, divergences, acceptance, evals


def sample(
    logdensity_fn: LogDensityFn,
    start: LaneStart,
    stream: rng.Stream,
    schedule_stream: rng.Stream,
    config: SamplerConfig,
) -> SampleResult:
    """Warm up every lane for its own length (aligned to end together), then draw."""
    loop = _Loop(logdensity_fn, stream, schedule_stream, config, int(start.warmup.max(initial=0)))
    t0 = time.perf_counter()
    state = hmc.init(start.position, logdensity_fn)
    state, w, warm_evals = _run_warmup(loop, state, start)
    t1 = time.perf_counter()
    params = hmc.HMCParams(w.step_size, w.inv_mass)
    draws, div, acc, draw_evals = _run_sampling(loop, state, params)
    t2 = time.perf_counter()
    timings = {"warmup": 1e3 * (t1 - t0), "sampling": 1e3 * (t2 - t1)}
    return SampleResult(
        draws, div, acc, w.step_size, w.inv_mass, 1 + warm_evals + draw_evals, timings
    )
