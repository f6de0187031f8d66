"""A Metropolis move by a deterministic map, for modes HMC crosses slowly.

The model supplies the map (regime_model.level_shift for the HMM): one way or its exact
inverse, chosen with probability 1/2 each, with a Jacobian determinant of 1, so accepting
theta' = map(theta) with min(1, p(theta') / p(theta)) leaves the posterior invariant.
Both uniforms come from the lane's counter-based stream (rng.Purpose.SHIFT), so the device
makes the same decisions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from regime_model import hmc, rng
from regime_model.types import (
    BoolArray,
    FloatArray,
    IntArray,
    LogDensityFn,
    MovedTrajectories,
    Trajectory,
    TrajectoryFn,
)

# theta [L, D] and each lane's direction (True: one way, False: the other, its inverse)
JumpFn = Callable[[FloatArray, BoolArray], FloatArray]


def jumped(
    jump: JumpFn, fn: LogDensityFn, stream: rng.Stream, iteration: int, state: hmc.HMCState
) -> tuple[hmc.HMCState, FloatArray]:
    """Every lane after one move, and the move's acceptance probability [L]: direction
    from the first uniform (< 1/2: True), the test log u < log p(theta') - log p(theta)
    from the second. The probability is min(1, p(theta') / p(theta)): 1 leaving a faulted
    start, 0 towards a faulted proposal (as the test decides)."""
    u = rng.uniform(stream, iteration, rng.Purpose.SHIFT, 2)
    proposal = hmc.init(jump(state.position, u[:, 0] < 0.5), fn)
    accept, rate = _decide(proposal, state, u[:, 1])
    return hmc.select(accept, proposal, state), rate


def _decide(
    proposal: hmc.HMCState, state: hmc.HMCState, u: FloatArray
) -> tuple[BoolArray, FloatArray]:
    with np.errstate(invalid="ignore"):  # -inf - -inf: a faulted lane stays put
        gain = proposal.logdensity - state.logdensity
    reachable = np.isfinite(proposal.logdensity)
    accept: BoolArray = reachable & (np.log(u) < gain)
    rate: FloatArray = np.where(reachable, np.exp(np.minimum(np.nan_to_num(gain), 0.0)), 0.0)
    return accept, rate


class Transition(NamedTuple):
    start: hmc.HMCState  # where the HMC step started: after the move, if any
    end: hmc.HMCState
    info: hmc.HMCInfo
    shift_rate: FloatArray  # [L] the move's acceptance probability (zeros: no move)


def transition(
    jump: JumpFn | None,
    fn: LogDensityFn,
    stream: rng.Stream,
    iteration: int,
    state: hmc.HMCState,
    key: hmc.Key,
    params: hmc.HMCParams,
    steps: IntArray,
) -> Transition:
    """One sampler transition: the move (with a `jump`), then the HMC step.

    Where the density runs both candidate trajectories at once (FusedDensity.moved: a
    device, in one submission instead of the move's and the trajectory's), the step's
    trajectory is run from the lanes' positions and from the proposals before the move is
    decided, and the one the move picks is kept: the same decisions and draws as the move
    and then the step, up to the device's rounding."""
    if jump is None:
        end, info = hmc.step(key, state, params, fn, steps)
        return Transition(state, end, info, np.zeros(len(steps)))
    moved = fn.moved if isinstance(fn, hmc.FusedDensity) else None
    if moved is None:
        start, rate = jumped(jump, fn, stream, iteration, state)
        end, info = hmc.step(key, start, params, fn, steps)
        return Transition(start, end, info, rate)
    u = rng.uniform(stream, iteration, rng.Purpose.SHIFT, 2)
    position = jump(state.position, u[:, 0] < 0.5)
    lane_steps, momentum = hmc.begin(key, params, steps)
    both = moved(state.position, state.grad, position, momentum, params.step_size,
                 params.inv_mass, lane_steps)  # fmt: skip
    with np.errstate(all="ignore"):
        proposal = hmc.HMCState(position, *hmc.sanitise(both.proposal_logdensity,
                                                        both.proposal_grad))  # fmt: skip
    accept, rate = _decide(proposal, state, u[:, 1])
    start = hmc.select(accept, proposal, state)
    trajectory = Trajectory(*(np.where(accept if a.ndim == 1 else accept[:, None], a, b)
                              for a, b in zip(both.moved, both.stay, strict=True)))  # fmt: skip
    end, info = hmc.finish(key, start, params, momentum, lane_steps, trajectory)
    return Transition(start, end, info, rate)


def moved_by_parts(
    fn: LogDensityFn,
    leapfrog: TrajectoryFn,
    position: FloatArray,
    grad: FloatArray,
    proposal: FloatArray,
    momentum: FloatArray,
    step_size: FloatArray,
    inv_mass: FloatArray,
    lane_steps: IntArray,
) -> MovedTrajectories:
    """FusedDensity.moved from a density and its trajectories, one call after another:
    the density at the proposals, the trajectory from the positions, the one from the
    proposals (started with the gradient the move's own evaluation hands on)."""
    logp, g = fn(proposal)
    with np.errstate(all="ignore"):
        start_grad = hmc.sanitise(logp, g)[1]
    stay = leapfrog(position, momentum, grad, step_size, inv_mass, lane_steps)
    moved = leapfrog(proposal, momentum, start_grad, step_size, inv_mass, lane_steps)
    return MovedTrajectories(stay, moved, logp, g)
