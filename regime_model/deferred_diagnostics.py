"""The diagnostics the gate does not read, off an update's critical path.

The gate reads only the decision quantities' bulk ESS (estimate.estimate_of); the
parameters' R-hat and ESS, and the decision quantities' R-hat, are diagnostics, and the
parameters' the dearest part of an update's host work (rank normalisation of every
parameter's pooled draws). They run once per instrument, on
the run that gives its final estimate, as soon as that estimate is final: on a pool of
threads (numpy releases the GIL in its sorts and sums), while the update's next block
runs on the device, split by instruments over the pool's threads. Each instrument's
diagnostics are its own draws' alone, so they are the same bits in any split
(tests/regime_model/test_regime_diagnostics.py).
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Literal

import numpy as np

from regime_model.blocks import take_instruments
from regime_model.estimate import RegimeEstimate, decision_rhat, parameter_diagnostics
from regime_model.sampler import SampleResult
from regime_model.spec import ModelSpec
from regime_model.types import BoolArray, FloatArray, IntArray

MAX_THREADS = 4  # a host runs a worker per account: leave the other cores to them
MIN_SHARE = 8  # instruments: below this a thread's share is not worth its overhead
# Draw values (instruments x chains x draws x parameters) per share: even on one thread
# the diagnostics' whole-array passes ran 1.1-1.2x faster on shares of this size than on
# 268 instruments or a wide group at once (their arrays stay in cache; docs/benchmarks.md,
# fourteenth session).
SHARE_VALUES = 1 << 16


FIELDS = ("rhat", "ess_bulk", "ess_tail", "rhat_decision")  # what `diagnose` fills
# Which instruments an update diagnoses: all; those whose final estimate fails the gate
# (the daemon's: all it reads of them); none (a benchmark of the sampler alone).
Which = Literal["all", "failing", "none"]


def _diagnostics(
    result: SampleResult, decision_draws: FloatArray, spec: ModelSpec, picked: IntArray | None
) -> tuple[FloatArray, ...]:
    """FIELDS of the instruments `picked` (None: all) of a run, from the run and its decision
    draws [N, C, S, 2]. The share is picked here, on the pool's thread: `settle` on the
    update's own thread took 17-21 ms over 4 warm updates of 268 instruments with the
    copies there, 6-9 ms without (docs/bench-results/replay_host.py, nineteenth session)."""
    if picked is not None:
        result = take_instruments(result, picked, len(decision_draws))
        decision_draws = decision_draws[picked]
    return (*parameter_diagnostics(result, spec), decision_rhat(decision_draws))


def diagnostic_threads() -> int:
    """Up to MAX_THREADS threads, at most half the cores this process may use."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_THREADS, (cores or 1) // 2))


class DeferredDiagnostics:
    """Which run gives each instrument of an update its estimate, and its diagnostics once
    that estimate is final; a context whose exit stops its threads. An instrument that
    runs on is never diagnosed on the run it discards.

    `which` "failing" diagnoses only the instruments whose final estimate fails the gate,
    "none" none; the others keep NaN. The daemon reads these diagnostics only in
    `model.unconverged`, about those instruments; on the H200 the update waited 19-31 ms
    at its end for the rest (docs/benchmarks.md, twenty-second session)."""

    def __init__(self, n: int, threads: int | None = None, which: Which = "all") -> None:
        if which not in ("all", "failing", "none"):
            raise ValueError(f"DeferredDiagnostics: which must be all, failing or none, "
                             f"got {which!r}")  # fmt: skip
        self.which = which
        self.runs: list[tuple[SampleResult, FloatArray, ModelSpec, int]] = []
        self.run_of = np.full(n, -1)
        self.index = np.zeros(n, dtype=np.intp)
        self.settled = np.zeros(n, dtype=bool)
        self.pending: list[tuple[IntArray, Future[tuple[FloatArray, ...]]]] = []
        self.threads = threads or diagnostic_threads()
        self.pool = ThreadPoolExecutor(self.threads, thread_name_prefix="diagnostics")

    def __enter__(self) -> DeferredDiagnostics:
        return self

    def __exit__(self, *exc: object) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def note(
        self, rows: IntArray, result: SampleResult, decision_draws: FloatArray, spec: ModelSpec
    ) -> None:
        """The estimates of `rows` (ascending) now come from `result`, run with `spec`, and
        its decision draws [rows, C, S, 2] (estimate.Estimated)."""
        self.run_of[rows] = len(self.runs)
        self.index[rows] = np.arange(len(rows))
        self.runs.append((result, decision_draws, spec, len(rows)))

    def settle(self, rows: IntArray, converged: BoolArray) -> None:
        """`rows` (ascending) keep the estimates they have, which pass the gate where
        `converged` [n]: diagnose them (or those of them that fail, or none, as `which`
        says), in the background."""
        rows = rows[~self.settled[rows]]
        self.settled[rows] = True
        if self.which == "none":
            return
        if self.which == "failing":
            rows = rows[~converged[rows]]
        for k in np.unique(self.run_of[rows]):
            mine = rows[self.run_of[rows] == k]
            result, decision, spec, n = self.runs[int(k)]
            values = len(mine) * spec.chains * spec.draws * result.draws.shape[-1]
            threads = min(self.threads, len(mine) // MIN_SHARE)
            shares = max(1, threads, min(len(mine), -(-values // SHARE_VALUES)))
            for share in np.array_split(mine, shares):
                picked = None if len(share) == n else self.index[share]
                future = self.pool.submit(_diagnostics, result, decision, spec, picked)
                self.pending.append((share, future))

    def diagnose(self, estimate: RegimeEstimate) -> RegimeEstimate:
        """`estimate` with every (diagnosed) instrument's FIELDS from its run."""
        self.settle(np.arange(len(self.settled)), np.asarray(estimate.converged, dtype=bool))
        fields = {f: getattr(estimate, f).copy() for f in FIELDS}
        for mine, future in self.pending:
            for values, found in zip(fields.values(), future.result(), strict=True):
                values[mine] = found
        return estimate._replace(**fields)
