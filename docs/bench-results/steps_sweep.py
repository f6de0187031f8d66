# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""What the leapfrog steps per iteration buy (issue 14's NumPyro ratio, and the gate):
`python docs/bench-results/steps_sweep.py [SHAPE] [BACKEND] [R] [MIN:MAX ...]` (default
trial, wgpu, 5 chained updates, 3:6 4:8 5:10 6:12). For each range of a warm update's
leapfrog steps (ModelSpec.steps_min, steps_max; the cold update keeps cold_steps_*), sets
up as `bench model` does (its synthetic returns) and prints one JSON line: the cold
update's seconds; the warm
update after it as the daemon runs it (its run-on, only the failing instruments'
diagnostics): its ms, gradient evaluations, instruments run on and converged; then the
chained ESS (gpu_backend/bench/chained_ess.py, as `bench model` reports it) three times
from the same carries: seconds, the worst instrument's bulk ESS, the median, and the worst
per second."""

import json
import sys
import time
from dataclasses import replace

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend import select_backend
from gpu_backend.bench.chained_ess import chained_runs
from regime_model.update import ModelSpec, refresh
from service.commands.bench import SHAPES, WINDOW, _synthetic_returns


def sweep(shape: str, backend_name: str, updates: int, lo: int, hi: int) -> dict[str, object]:
    backend = select_backend(backend_name)
    N = SHAPES[shape]
    returns, keys = _synthetic_returns(N), np.arange(N)
    spec = replace(ModelSpec(), steps_min=lo, steps_max=hi)
    t0 = time.perf_counter()
    _, carries, _ = refresh(returns[:, :WINDOW], [None] * N, keys, 1, 7, spec, backend)
    cold_s = time.perf_counter() - t0
    window = returns[:, 1 : WINDOW + 1]
    t0 = time.perf_counter()
    estimate, carries, info = refresh(window, carries, keys, 2, 7, spec, backend, "failing")
    warm_ms = 1e3 * (time.perf_counter() - t0)
    repeats = [chained_runs(backend, window, carries, keys, 3, 7, spec, updates).figures()
               for _ in range(3)]
    return {
        "steps": [lo, hi], "shape": shape, "backend": backend.name,
        "cold_s": round(cold_s, 3), "warm_ms": round(warm_ms, 1),
        "warm_gradient_evals": info.gradient_evals, "warm_extended": info.extended,
        "warm_converged": int(estimate.converged.sum()),
        "chained_seconds": [r["chained_seconds"] for r in repeats],
        "chained_ess_bulk_min": repeats[0]["chained_ess_bulk_min"],
        "chained_ess_bulk_median": repeats[0]["chained_ess_bulk_median"],
        "chained_min_ess_per_s": [r["chained_min_ess_per_s"] for r in repeats],
    }  # fmt: skip


def main() -> None:
    shape = sys.argv[1] if len(sys.argv) > 1 else "trial"
    backend = sys.argv[2] if len(sys.argv) > 2 else "wgpu"
    updates = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    for pair in sys.argv[4:] or ["3:6", "4:8", "5:10", "6:12"]:
        lo, hi = (int(x) for x in pair.split(":"))
        print(json.dumps(sweep(shape, backend, updates, lo, hi)), flush=True)


if __name__ == "__main__":
    main()
