"""An update's sampler input: a validated batch of instruments x chains (build_batch).

Cold chains start at the priors' centre, jittered; warm ones at their carries. Each lane
draws from its own counter-based stream, keyed by (seed, instrument, chain, update), and
an extension block's streams differ in the chain word.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from regime_model import rng
from regime_model.backend import ReturnsWindow, UpdateBatch
from regime_model.carry import InstrumentCarry, carry_problem
from regime_model.params import n_params
from regime_model.sampler import LaneStart, SamplerConfig
from regime_model.scaling import robust_scale
from regime_model.spec import ModelSpec
from regime_model.types import FloatArray, IntArray, Priors, UIntArray

# Cold chains start at the prior's centre jittered by U(-1/2, 1/2) per coordinate: spread
# enough for R-hat to see chains that disagree, close enough to converge in a short warm-up.
INIT_JITTER = 0.5
COLD_STEP_SIZE = 0.1


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
    dim = n_params(spec.n_states)
    if _all_usable(carries, spec.chains, dim):
        return
    for i, carry in enumerate(carries):
        problem = None if carry is None else carry_problem(carry, spec.chains, dim)
        if problem:
            raise ValueError(f"carries[{i}] cannot warm-start this model: {problem}; pass None")


def _all_usable(carries: Sequence[InstrumentCarry | None], chains: int, dim: int) -> bool:
    """True when carry_problem finds nothing in any carry, tested over all of them at once
    (a warm update's 268 carries one by one: 4-5 ms on a 2-core VM, host_micro.py in
    docs/bench-results); False when any might fail, and
    carry_problem then says which and why."""
    present = [c for c in carries if c is not None]
    if not present:
        return True
    try:
        position, step_size, inv_mass = (np.stack(field) for field in zip(*present, strict=True))
    except (TypeError, ValueError):  # fields of different shapes: carry_problem names them
        return False
    M = len(present)
    return bool(position.shape == (M, chains, dim) and step_size.shape == (M, chains)
                and inv_mass.shape == (M, dim) and np.isfinite(position).all()
                and np.isfinite(step_size).all() and np.isfinite(inv_mass).all()
                and (step_size > 0).all() and (inv_mass > 0).all())


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
    if cold.any():  # the jittered prior centre; every warm lane's row is its carry's below
        jitter = INIT_JITTER * (2.0 * rng.uniform(stream, 0, rng.Purpose.INIT, D) - 1.0)
        position = prior_centre(spec.n_states, spec.priors) + jitter
    else:
        position = np.empty((len(cold), D))
    step = np.full(len(cold), COLD_STEP_SIZE)
    inv_mass = np.ones((len(cold), D))
    warm = [(i, carry) for i, carry in enumerate(carries) if carry is not None]
    if warm:  # the carries' rows in three copies, not three per instrument
        lanes = (np.array([i for i, _ in warm])[:, None] * C + np.arange(C)).ravel()
        position[lanes] = np.concatenate([carry.position for _, carry in warm])
        step[lanes] = np.concatenate([carry.step_size for _, carry in warm])
        inv_mass[lanes] = np.repeat(np.stack([carry.inv_mass for _, carry in warm]), C, axis=0)
    warmup = np.where(cold, spec.warmup_cold, spec.warmup_warm).astype(np.int64)
    return LaneStart(position, step, inv_mass, warmup, cold)


def _sampler_config(spec: ModelSpec, every_lane_cold: bool) -> SamplerConfig:
    """A batch of instruments that all start cold takes the cold warm-up's leapfrog steps;
    any other (a warm update, a run-on block, cold and warm together) the warm ones."""
    if every_lane_cold:
        steps = (spec.cold_steps_min, spec.cold_steps_max)
    else:
        steps = (spec.steps_min, spec.steps_max)
    return SamplerConfig(spec.draws, spec.chains, spec.target_accept, *steps, spec.trajectory,
                         shift_moves=spec.shift_moves)  # fmt: skip


def build_batch(
    returns: np.ndarray,
    carries: Sequence[InstrumentCarry | None],
    instrument_keys: np.ndarray,
    seq: int,
    seed: int,
    spec: ModelSpec,
    extension: int = 0,
    rows: IntArray | None = None,
    scales: FloatArray | None = None,
) -> tuple[UpdateBatch, FloatArray]:
    """`refresh`'s validated sampler input, and each instrument's return scale [n];
    `extension` k > 0: the k-th block an update runs on (its own random streams), of the
    instruments `rows` of `returns` (carries and keys are theirs). The batch's window is
    the account's whole, so a device reads a block's returns from the ring it holds.
    `scales`: robust_scale(returns), where the caller has it (an update's batches share
    its returns: computed once, not once per batch; 3.6-4 ms each at 268 instruments on a
    2-core VM, docs/bench-results/host_micro.py)."""
    returns = np.asarray(returns, dtype=np.float64)
    picked = returns if rows is None else returns[rows]
    keys = _as_keys(instrument_keys)
    _validate(picked, carries, keys, spec)
    every_scale = robust_scale(returns) if scales is None else scales
    scale = every_scale if rows is None else every_scale[rows]
    y = np.repeat(picked / scale[:, None], spec.chains, axis=0)
    stream, schedule = _streams(seed, seq, keys, spec.chains, extension)
    start = _lane_start(carries, stream, spec)
    config = _sampler_config(spec, bool(start.adapt_mass.all()))  # adapt_mass: cold lanes
    window = ReturnsWindow(returns, every_scale, spec.chains, rows)
    batch = UpdateBatch(y, spec.n_states, spec.priors, start, stream, schedule, config, window)
    return batch, scale
