"""Whether an instrument's window has two readings: the level-shift move's acceptance.

At a regime change one window has two readings (the recent bars ordinary, or the recent
bars a new regime; docs/benchmarks.md), and the estimate the strategy reads is the share
of the second. Four chains that all sit in one reading agree with each other, so neither
R-hat nor the Monte Carlo error can see that the other reading exists. The level-shift map
(regime_model.level_shift) takes a draw of one reading towards the other; the mean of
min(1, p(map(theta)) / p(theta)) over the posterior, both ways, is near 0 where the window
has one reading (below 1e-30 in October 2008) and 1e-2 to 2e-1 where it has two (August
2008).

Where the sampler makes the move (SamplerConfig.shift_moves, the daemon's default) it has
this number already: each transition's move computes min(1, ...) at the chain's state in
a random direction, and the sampler sums it over the sampling transitions
(SampleResult.shift_rate: free, on every backend, in the same submission). Without the
move, `shift_acceptance` below tests the map at the update's draws: a pure function of the
draws (no random numbers), one batched density call.
"""

from __future__ import annotations

import numpy as np

from regime_model.backend import Backend
from regime_model.level_shift import shifted
from regime_model.types import FloatArray, Priors

# Draws moved per instrument, both ways, spread evenly over all its chains' draws: 48
# density evaluations per instrument whatever the chains (an extension block has 32), a
# few per cent of a 4-chain update's. The two cases differ by orders of magnitude (above),
# so 16 draws tell them apart.
DRAWS = 16


def shift_acceptance(
    draws: FloatArray, y: FloatArray, K: int, priors: Priors, backend: Backend
) -> FloatArray:
    """[N] mean acceptance probability of the move at draws [N, C, S, D] (unconstrained),
    y [N, T] the windows the draws are of (scaled as the sampler saw them)."""
    N, D = draws.shape[0], draws.shape[-1]
    pooled = draws.reshape(N, -1, D)  # chain-major
    M = min(DRAWS, pooled.shape[1])
    picked = pooled[:, np.linspace(0, pooled.shape[1] - 1, M).round().astype(np.int64)]
    flat = picked.reshape(N * M, D)
    ways = np.ones(N * M, dtype=bool)
    theta = np.concatenate([flat, shifted(flat, ways, K=K), shifted(flat, ~ways, K=K)])
    ys = np.tile(np.repeat(y, M, axis=0), (3, 1))
    logp, _ = backend.hmm_value_and_grad(theta, ys, K, priors)
    here, up, down = logp.reshape(3, N, M)
    with np.errstate(invalid="ignore", over="ignore"):
        gains = np.stack([up - here, down - here])
        rate = np.where(np.isfinite(gains), np.exp(np.minimum(gains, 0.0)), 0.0)
    out: FloatArray = rate.mean(axis=(0, 2))
    return out
