"""One long cold reference for `bench regime-change`: P(most volatile regime at the last
bar of a window), the posterior mean over the run's draws.

The run is the daemon's own cold update (`regime_model.update.build_batch`, the numpy
backend): the same model, priors, window scaling and level-shift move, with many chains
and draws. The estimate averages the filtered probability over `SUMMARY_DRAWS` draws
spread evenly over every chain, not over a handful: at a regime change each draw's value
sits near 0 or near 1 (two readings of one window, docs/benchmarks.md), so an average of
40 draws (what the references of 2026-12-02 used, through `fit`'s per-bar paths) carries a
Monte Carlo sd of up to 0.08 by itself. `mcse` says what the reference's own error is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np

from gpu_backend.numpy_backend import NumpyBackend
from regime_model.diagnostics import convergence
from regime_model.spec import ModelSpec
from regime_model.update import build_batch

# Draws whose filtered probability is averaged: an sd of at most 0.5 / sqrt(ESS) with the
# ESS of the whole run, and a forward filter of 8,000 lanes (not 160,000) per reference.
SUMMARY_DRAWS = 8000
KEY = np.array([1], dtype=np.uint32)


class ReferenceResult(NamedTuple):
    p_turbulent: float  # posterior mean of P(most volatile regime at the last bar)
    rhat: float  # worst rank-normalised split R-hat over the parameters
    mcse: float  # Monte Carlo standard error of p_turbulent (its sd / sqrt of its bulk ESS)


def reference(
    window: np.ndarray, seed: int, chains: int, draws: int, warmup: int, states: int = 2
) -> ReferenceResult:
    """The long cold run on `window` (the returns, oldest first)."""
    returns = np.asarray(window, dtype=np.float64)[None]
    spec = replace(ModelSpec(n_states=states, window=returns.shape[1]), chains=chains,
                   draws=draws, warmup_cold=warmup, extend_max=0)  # fmt: skip
    batch, _ = build_batch(returns, [None], KEY, 1, seed, spec)
    backend = NumpyBackend()
    result = backend.run_update(batch)
    # An even spread of each chain's draws: [C, S'] of them, S' = SUMMARY_DRAWS / C.
    per_chain = max(1, min(draws, SUMMARY_DRAWS // chains))
    picked = result.draws[:, np.linspace(0, draws - 1, per_chain).round().astype(np.int64)]
    flat = picked.reshape(chains * per_chain, -1)
    y = np.repeat(batch.y[:1], len(flat), axis=0)
    p = backend.hmm_predictive(flat, y, states).filtered_last[:, -1]
    shaped = p.reshape(1, chains, per_chain, 1)
    ess = float(convergence(shaped).ess_bulk[0, 0]) if per_chain >= 4 else 1.0
    rhat = float(convergence(result.draws[None]).rhat.max())
    return ReferenceResult(float(p.mean()), rhat, float(p.std() / np.sqrt(max(ess, 1.0))))
