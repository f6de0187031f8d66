"""A Metropolis move by a deterministic map, for modes HMC crosses slowly.

The model supplies the map (regime_model.level_shift for the HMM): one way or its exact
inverse, chosen with probability 1/2 each, with a Jacobian determinant of 1, so accepting
theta' = map(theta) with min(1, p(theta') / p(theta)) leaves the posterior invariant.
Both uniforms come from the lane's counter-based stream (rng.Purpose.SHIFT), so the device
makes the same decisions.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from regime_model import hmc, rng
from regime_model.types import BoolArray, FloatArray, LogDensityFn

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
    with np.errstate(invalid="ignore"):  # -inf - -inf: a faulted lane stays put
        gain = proposal.logdensity - state.logdensity
    reachable = np.isfinite(proposal.logdensity)
    accept = reachable & (np.log(u[:, 1]) < gain)
    rate: FloatArray = np.where(reachable, np.exp(np.minimum(np.nan_to_num(gain), 0.0)), 0.0)
    return hmc.select(accept, proposal, state), rate
