# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""More chains with fewer draws each: `python docs/bench-results/chains_draws.py N BACKEND
UPDATES CHAINS:DRAWS...` runs, for each setting, a cold update then UPDATES warm ones of
N instruments (T = 256, K = 2, the daemon's ModelSpec with `chains` and `draws` replaced)
and prints one JSON line per setting: the warm updates' median wall ms and the median of
their first device run (the main run: run-on blocks come after it), the instrument-blocks
run on, and over the warm updates the median of the worst instrument's bulk ESS (its worst
parameter) and of that per second of the update, the figure compared with NumPyro. A warm
update's chains run side by side on a device while its iterations (15 of step-size
re-adaptation, then the draws) run one after another: the same draws from 4 times the
chains take about half the iterations."""

import json
import sys
import time
from dataclasses import replace
from typing import Any

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend import select_backend
from gpu_backend.identity import regime_returns
from regime_model.update import ModelSpec, refresh
from runon_blocks import RUNS, timed_runs  # the device runs' wall times, beside this script

def measure(n: int, backend: Any, updates: int, chains: int, draws: int) -> dict[str, Any]:
    series = 0.01 * regime_returns(n, 256 + updates + 1, np.random.default_rng(0))
    keys, spec = np.arange(n, dtype=np.uint32), replace(ModelSpec(), chains=chains, draws=draws)
    _, carries, _ = refresh(series[:, :256], [None] * n, keys, 1, 7, spec, backend)
    walls, firsts, extended, ess, per_s = [], [], [], [], []
    for seq in range(2, updates + 2):
        RUNS.clear()
        t0 = time.perf_counter()
        est, carries, info = refresh(series[:, seq - 1 : seq + 255], carries, keys, seq, 7,
                                     spec, backend)  # fmt: skip
        wall = 1e3 * (time.perf_counter() - t0)
        walls.append(wall)
        firsts.append(RUNS[0]["ms"])
        extended.append(info.extended)
        ess.append(float(est.ess_bulk.min()))
        per_s.append(1e3 * ess[-1] / wall)
    return {"instruments": n, "backend": backend.name, "chains": chains, "draws": draws,
            "warm_ms_median": round(float(np.median(walls)), 1),
            "walls_ms": [round(w, 1) for w in walls],
            "first_run_ms_median": round(float(np.median(firsts)), 1),
            "extended": extended, "min_ess_median": round(float(np.median(ess)), 1),
            "min_ess": [round(e, 1) for e in ess],
            "min_ess_per_s_median": round(float(np.median(per_s)), 1)}  # fmt: skip


def main() -> None:
    n, backend, updates = int(sys.argv[1]), select_backend(sys.argv[2]), int(sys.argv[3])
    timed_runs()
    for setting in sys.argv[4:]:
        chains, draws = (int(x) for x in setting.split(":"))
        print(json.dumps(measure(n, backend, updates, chains, draws)), flush=True)


if __name__ == "__main__":
    main()
