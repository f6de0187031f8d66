"""A Metropolis move between the two readings of a window at a regime change.

At a regime change the posterior of a window has two modes that read the same returns
two ways (docs/benchmarks.md, "What the error is made of"): either the recent bars are
the turbulent regime, or they are ordinary and "turbulent" is kept for the rare extremes.
The second reading is the first with every regime moved one level up: its calm sigma is
the first's turbulent sigma, its turbulent sigma a level higher, the persistences swap.
HMC crosses between them only every 40-200 iterations, so an update of a few chains sees
each chain in one reading. This move proposes the other reading directly.

The proposal, up: state k takes the parameters of state k + 1 (cyclically: the calmest
state's mean and transition row move to the top), log sigma_0 rises by the first gap
(s1' = s1 + softplus(eta_1)) and the gaps rotate (eta' = eta_2..eta_{K-1}, eta_1), so
every sigma moves one level up and the top one rises by the old first gap. Down is its
exact inverse. Each map is a permutation of coordinates plus a shear of s1 by a function
of eta, so its Jacobian determinant is 1: proposing up or down with probability 1/2 each
and accepting with min(1, p(theta') / p(theta)) leaves the posterior invariant.
"""

from __future__ import annotations

from functools import cache, partial

import numpy as np

from regime_model.jump_move import JumpFn
from regime_model.types import BoolArray, FloatArray, IntArray


@cache
def _transition_order(K: int) -> tuple[IntArray, IntArray]:
    """Indices into the off-diagonal logits u (row-major, j != i) for relabelling up and
    down: u'[i, j] = u[s(i), s(j)] with s(k) = k + 1 (up) or k - 1 (down), mod K."""
    cells = [(i, j) for i in range(K) for j in range(K) if j != i]
    where = {cell: n for n, cell in enumerate(cells)}
    up = np.array([where[((i + 1) % K, (j + 1) % K)] for i, j in cells])
    down = np.array([where[((i - 1) % K, (j - 1) % K)] for i, j in cells])
    return up, down


def shifted(theta: FloatArray, up: BoolArray, K: int) -> FloatArray:
    """Each lane's theta [L, D] moved one level up (where `up`) or down (elsewhere)."""
    mu, s1, eta, u = theta[:, :K], theta[:, K], theta[:, K + 1 : 2 * K], theta[:, 2 * K :]
    order_up, order_down = _transition_order(K)
    col = up[:, None]
    new_mu = np.where(col, np.roll(mu, -1, axis=1), np.roll(mu, 1, axis=1))
    new_eta = np.where(col, np.roll(eta, -1, axis=1), np.roll(eta, 1, axis=1))
    gap = np.where(up, np.logaddexp(0.0, eta[:, 0]), -np.logaddexp(0.0, eta[:, -1]))
    new_u = np.where(col, u[:, order_up], u[:, order_down])
    return np.concatenate([new_mu, (s1 + gap)[:, None], new_eta, new_u], axis=1)


def move_for(K: int, shift_moves: bool) -> JumpFn | None:
    """The sampler's `jump` for SamplerConfig.shift_moves: this map for K states, or none."""
    return partial(shifted, K=K) if shift_moves else None
