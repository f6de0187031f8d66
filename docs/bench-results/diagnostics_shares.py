# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""The parameters' diagnostics on one thread, whole or in shares of SHARE_VALUES draw
values (regime_model/deferred_diagnostics.py), alternated in one process: the best of 5
calls per round, four rounds, ms. Same bits either way (checked).

    python docs/bench-results/diagnostics_shares.py

Shapes: one account of 268 instruments x 4 chains, a trial account's 54 x 4, and its
wide group (19 x 32); 40 draws of 8 parameters, a third repeated (rejections).
"""

from __future__ import annotations

import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from regime_model import deferred_diagnostics as dd
from regime_model.estimate import RegimeEstimate
from regime_model.sampler import SampleResult
from regime_model.spec import ModelSpec
from regime_model.width import wide_spec


def _run(n: int, chains: int, draws: int = 40, params: int = 8) -> SampleResult:
    lanes = n * chains
    d = np.random.default_rng(0).standard_normal((lanes, draws, params))
    d[:, 1::3] = d[:, 0 : draws - 1 : 3]
    ones = np.ones(lanes)
    return SampleResult(d, np.zeros(lanes, np.int64), ones, ones, np.ones((lanes, params)), 1,
                        {}, np.zeros((lanes, draws)), ones, ones)  # fmt: skip


def _diagnose(n: int, run: SampleResult, spec: ModelSpec) -> RegimeEstimate:
    undiagnosed = RegimeEstimate(*(np.full(n, np.nan) for _ in RegimeEstimate._fields))
    with dd.DeferredDiagnostics(n, threads=1) as later:
        later.note(np.arange(n), run, np.zeros((n, spec.chains, spec.draws, 2)), spec)
        return later.diagnose(undiagnosed)


def main() -> None:
    share = dd.SHARE_VALUES
    for n, spec in ((268, ModelSpec()), (54, ModelSpec()), (19, wide_spec(ModelSpec()))):
        run = _run(n, spec.chains)
        best: dict[str, list[float]] = {"whole": [], "shares": []}
        out = {}
        for _ in range(4):
            for name, size in (("whole", 1 << 40), ("shares", share)):
                dd.SHARE_VALUES = size
                times = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    out[name] = _diagnose(n, run, spec)
                    times.append(time.perf_counter() - t0)
                best[name].append(round(1e3 * min(times), 1))
        dd.SHARE_VALUES = share
        same = all(np.array_equal(a, b, equal_nan=True)
                   for a, b in zip(out["whole"], out["shares"], strict=True))  # fmt: skip
        print(f"{n} x {spec.chains}: same bits {same}, best ms {best}")


if __name__ == "__main__":
    main()
