"""One model update for a batch of instruments: the daemon's single entry point.

All N instruments x C chains are lanes of one batched sampler run on the backend; cold
(no carry) and warm instruments mix freely (see `sampler`). Deterministic: the output is a
pure function of the arguments, bit for bit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from regime_model import rng
from regime_model.backend import Backend, ReturnsWindow, UpdateBatch
from regime_model.blocks import join_chains, take_instruments
from regime_model.carry import (
    InstrumentCarry,
    carry_from_arrays,
    carry_problem,
    carry_to_arrays,
)
from regime_model.estimate import RegimeEstimate, estimate_of, merge_rows
from regime_model.params import n_params
from regime_model.sampler import LaneStart, SamplerConfig, SampleResult
from regime_model.scaling import robust_scale
from regime_model.spec import ModelSpec
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


class RefreshInfo(NamedTuple):
    gradient_evals: int  # batched value-and-gradient calls (each covers all N x C lanes)
    timings_ms: dict[str, float]
    extended: int = 0  # instrument-blocks sampled beyond the first (effort follows need)


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


def _streams(
    seed: int, seq: int, keys: UIntArray, chains: int, extension: int = 0
) -> tuple[rng.Stream, rng.Stream]:
    """Each lane's stream, and the batch-wide one that draws the leapfrog step counts.
    An extension block's streams differ in the chain word (chains < 2**16)."""
    N = len(keys)
    offset = np.uint32(extension << 16)
    chain = np.tile(np.arange(chains, dtype=np.uint32), N) + offset
    lanes = rng.make_stream(seed, np.repeat(keys, chains), chain, seq)
    zero = np.zeros(1, dtype=np.uint32)
    return lanes, rng.make_stream(seed, zero, zero + offset, seq)


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
        shift_moves=spec.shift_moves,
    )


def build_batch(
    returns: np.ndarray,
    carries: Sequence[InstrumentCarry | None],
    instrument_keys: np.ndarray,
    seq: int,
    seed: int,
    spec: ModelSpec,
    extension: int = 0,
    rows: IntArray | None = None,
) -> tuple[UpdateBatch, FloatArray]:
    """`refresh`'s validated sampler input, and each instrument's return scale [n];
    `extension` k > 0: the k-th block an update runs on (its own random streams), of the
    instruments `rows` of `returns` (carries and keys are theirs). The batch's window is
    the account's whole, so a device reads a block's returns from the ring it holds."""
    returns = np.asarray(returns, dtype=np.float64)
    picked = returns if rows is None else returns[rows]
    keys = _as_keys(instrument_keys)
    _validate(picked, carries, keys, spec)
    every_scale = robust_scale(returns)
    scale = every_scale if rows is None else every_scale[rows]
    y = np.repeat(picked / scale[:, None], spec.chains, axis=0)
    stream, schedule = _streams(seed, seq, keys, spec.chains, extension)
    start, config = _lane_start(carries, stream, spec), _sampler_config(spec)
    window = ReturnsWindow(returns, every_scale, spec.chains, rows)
    batch = UpdateBatch(y, spec.n_states, spec.priors, start, stream, schedule, config, window)
    return batch, scale


def needs_more(estimate: RegimeEstimate, spec: ModelSpec) -> BoolArray:
    """[N] the instruments an update runs on: those that fail the gate, and those whose
    window has two readings, where agreeing chains may all sit in one (readings.py)."""
    out: BoolArray = ~estimate.converged | (estimate.shift_acceptance > spec.two_readings)
    return out


def extension_start(
    result_draws: FloatArray, carry: InstrumentCarry, chains: int
) -> InstrumentCarry:
    """`chains` chains at draws [C, S, D] spread evenly over every chain's draws (chain-
    major), with the instrument's step size (the chains' mean) and metric."""
    pooled = result_draws.reshape(-1, result_draws.shape[-1])
    picked = np.linspace(0, len(pooled) - 1, chains).round().astype(np.int64)
    step = np.full(chains, float(np.mean(carry.step_size)))
    return InstrumentCarry(pooled[picked].copy(), step, carry.inv_mass.copy())


def refresh(
    returns: np.ndarray,
    carries: Sequence[InstrumentCarry | None],
    instrument_keys: np.ndarray,
    seq: int,
    seed: int,
    spec: ModelSpec,
    backend: Backend,
) -> tuple[RegimeEstimate, list[InstrumentCarry], RefreshInfo]:
    """Refresh every instrument's posterior in one batch; carries[i] None = cold start.

    Effort follows need: an instrument that `needs_more` runs on, up to `spec.extend_max`
    blocks, in a batch of just those instruments: `spec.extension_chains` chains started at
    its draws (extension_start), `spec.extension_warmup` iterations of step-size
    re-adaptation, then `spec.draws` draws. Its estimate is the blocks' chains together
    (blocks.join_chains: a second block adds to the first), its carry the first
    `spec.chains` chains of its last block; the rest stop after the first block.
    """
    returns = np.asarray(returns, dtype=np.float64)
    batch, scale = build_batch(returns, carries, instrument_keys, seq, seed, spec)
    result = backend.run_update(batch)
    t0 = time.perf_counter()
    estimate, new = estimate_of(result, batch.y, scale, spec, backend)
    timings = {**result.timings_ms, "summary": 1e3 * (time.perf_counter() - t0)}
    t0 = time.perf_counter()
    evals, extended = result.gradient_evals, 0
    more = replace(spec, chains=spec.extension_chains, warmup_warm=spec.extension_warmup)
    keys = np.asarray(instrument_keys)
    # Each instrument's latest draws [chains, S, D]: where its next block starts.
    source = list(result.draws.reshape(len(returns), spec.chains, spec.draws, -1))
    C = spec.chains
    blocks: tuple[IntArray, SampleResult, int] | None = None  # rows, their runs so far, chains
    for block in range(1, spec.extend_max + 1):
        rows = np.flatnonzero(needs_more(estimate, spec) if block == 1 else ~estimate.converged)
        if not len(rows):
            break
        part = [extension_start(source[i], new[i], more.chains) for i in rows]
        ext, ext_scale = build_batch(returns, part, keys[rows], seq, seed, more, block, rows)
        ext_result = backend.run_update(ext)
        ext_draws = ext_result.draws.reshape(len(rows), more.chains, more.draws, -1)
        run, chains = ext_result, more.chains
        if blocks is not None:  # these rows ran a block before: add this one's chains to it
            before, runs, chains_before = blocks
            earlier = take_instruments(runs, np.searchsorted(before, rows), len(before))
            run, chains = join_chains(ext_result, earlier, len(rows)), chains + chains_before
        blocks = (rows, run, chains)
        y = np.repeat(ext.y[:: more.chains], chains, axis=0)
        joined = replace(more, chains=chains, extension_chains=chains)
        ext_estimate, ext_new = estimate_of(run, y, ext_scale, joined, backend)
        estimate = merge_rows(estimate, ext_estimate, rows)
        for j, (i, carry) in enumerate(zip(rows, ext_new, strict=True)):
            new[i] = InstrumentCarry(carry.position[:C], carry.step_size[:C], carry.inv_mass)
            source[i] = ext_draws[j]
        evals, extended = evals + ext_result.gradient_evals, extended + len(rows)
    if extended:
        timings["extension"] = 1e3 * (time.perf_counter() - t0)
    return estimate, new, RefreshInfo(evals, timings, extended)
