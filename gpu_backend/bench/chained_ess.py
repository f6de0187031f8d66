"""The worst instrument's bulk ESS per second, from chains long enough to see it.

One warm update's chains (4 x 40 draws: split chains of 20) see autocorrelation out to
about 20 lags. The slowest of 268 instruments mixes more slowly than that: its ESS from
one update was 2.4x what 1,000 draws per chain gave (docs/benchmarks.md, twenty-first
session), and the NumPyro ratio with it. Here `updates` warm updates on ONE window (a
fixed posterior) run one after another, each from the last one's carries, and every
chain's kept draws are joined: 5 updates give 4 chains x 200 draws, what the NumPyro peer
keeps (docs/benchmarks.md, "Sampler efficiency against NumPyro"). Every instrument runs
narrow (its carry's first `spec.chains` chains) and without run-on blocks, so that each
update's lanes are the same chains; the time is the updates' whole wall time, their
step-size re-adaptation included, the parameters' R-hat and ESS not (`diagnose="none"`):
neither the gate nor the strategy reads them, and NumPyro's time, the figure this one is
set against, holds its sampling alone, none of its diagnostics. (With the daemon's
"failing", every chained update diagnosed the instruments that fail the gate without a
run-on: 20 ms of a 56 ms update on the H200, docs/benchmarks.md.)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from regime_model.backend import Backend, UpdateBatch
from regime_model.diagnostics import bulk_ess
from regime_model.sampler import SampleResult
from regime_model.update import InstrumentCarry, ModelSpec, RegimeEstimate, refresh


class _Recording:
    """`backend`, keeping the draws of every run it makes for an update."""

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        self.draws: list[np.ndarray] = []

    def run_update(self, batch: UpdateBatch) -> SampleResult:
        result = self._backend.run_update(batch)
        self.draws.append(result.draws)
        return result

    def __getattr__(self, name: str) -> Any:  # everything else is the backend's own
        return getattr(self._backend, name)


class ChainedRuns(NamedTuple):
    """What chained warm updates of one window made."""

    draws: np.ndarray  # [N, C, updates x S, D]: every chain's kept draws, joined
    estimate: RegimeEstimate  # the last update's
    carries: list[InstrumentCarry]  # the last update's
    gradient_evals: int
    seconds: float  # the updates' whole wall time
    updates: int

    def figures(self) -> dict[str, Any]:
        """`bench model`'s chained figures: each instrument's worst parameter's bulk ESS
        over the joined draws, and the slowest instrument's ESS per second."""
        ess = bulk_ess(self.draws).min(axis=1)  # each instrument's worst parameter
        return {
            "chained_updates": self.updates,
            "chained_draws_per_chain": int(self.draws.shape[2]),
            "chained_seconds": round(self.seconds, 3),
            "chained_ess_bulk_min": float(ess.min()),
            "chained_ess_bulk_median": float(np.median(ess)),
            "chained_min_ess_per_s": round(float(ess.min()) / self.seconds, 2),
        }


def model_start(
    returns: np.ndarray, keys: np.ndarray, spec: ModelSpec, backend: Backend
) -> tuple[np.ndarray, list[InstrumentCarry]]:
    """`bench model`'s start for returns [N, >= WINDOW + 1]: a cold update of the first
    window, then a warm one of the next; that window, and the warm update's carries."""
    N, T = len(returns), spec.window
    _, carries, _ = refresh(returns[:, :T], [None] * N, keys, 1, 7, spec, backend)
    window = returns[:, 1 : T + 1]
    _, carries, _ = refresh(window, carries, keys, 2, 7, spec, backend)
    return window, list(carries)


def chained_runs(
    backend: Backend,
    window: np.ndarray,
    carries: Sequence[InstrumentCarry],
    keys: np.ndarray,
    first_seq: int,
    seed: int,
    spec: ModelSpec,
    updates: int,
) -> ChainedRuns:
    """`updates` warm updates of `window` [N, T] from `carries`, as the module says."""
    C, N = spec.chains, len(window)
    narrow = replace(spec, extend_max=0)
    chained: list[InstrumentCarry | None] = [
        InstrumentCarry(c.position[:C], c.step_size[:C], c.inv_mass) for c in carries
    ]
    recording = _Recording(backend)
    runs: list[np.ndarray] = []
    evals = 0
    t0 = time.perf_counter()
    for k in range(updates):
        recording.draws.clear()
        estimate, new, info = refresh(window, chained, keys, first_seq + k, seed, narrow,
                                      recording, diagnose="none")  # fmt: skip
        chained, evals = list(new), evals + info.gradient_evals
        (draws,) = recording.draws  # every instrument narrow, no run-on: one run
        runs.append(draws.reshape(N, C, spec.draws, -1))
    seconds = time.perf_counter() - t0
    return ChainedRuns(np.concatenate(runs, axis=2), estimate, list(new), evals, seconds,
                       updates)
