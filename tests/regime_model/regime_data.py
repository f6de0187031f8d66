"""Synthetic regime-switching returns with known states, shared by the update tests."""

from __future__ import annotations

import numpy as np


def two_regime_returns(
    n: int, T: int, seed: int, vols: tuple[float, float] = (0.01, 0.03), switch: float = 0.03
) -> tuple[np.ndarray, np.ndarray]:
    """Returns [n, T] and true states [n, T] of a sticky two-state chain (state 1 = turbulent)."""
    rng = np.random.default_rng(seed)
    flips = rng.random((n, T)) < switch
    states = np.cumsum(flips, axis=1) % 2
    returns = rng.normal(0.0003, np.where(states == 1, vols[1], vols[0]))
    return returns, states
