# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""What the bar's own work would cost if the MCMC ran between bars (issue 14, thirtieth
session; speculative_weights.py measured whether the weights hold): `python
docs/bench-results/bar_pass_cost.py BACKEND [REPEATS [SIZES]]` (SIZES 1: the trial account
alone).

At the bar, every draw of the update before needs its log density on the new window: a
pass over the window per draw, with today's backend operations. A trial account's draws
are 36 narrow instruments x 4 chains x 40 draws and 18 wide ones x 32 x 40 (28,800); the
round's five accounts 144,000. Two ways are timed: `hmm_value_and_grad` (the log
density, and a gradient the weights do not need), which reads a window per draw
(y [draws, T]: 29 MB of float32 at 28,800 draws), and `hmm_predictive`, which reads one
window per chain (draws_per_row 40) and returns the filtered regime and the predictive
but not the density. One JSON line per size and operation: the median ms of REPEATS runs
(default 9) after one to warm, and the range.
"""

import json
import sys
import time
from functools import partial

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend import select_backend
from regime_model.batches import prior_centre
from regime_model.types import Priors

T, K, DRAWS = 256, 2, 40
SIZES = {"trial account": 36 * 4 + 18 * 32, "five trial accounts": 5 * (36 * 4 + 18 * 32)}


def timed(fn, repeats: int) -> list[float]:
    fn()  # compiles, allocates, wakes the clocks
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(1e3 * (time.perf_counter() - t0))
    return out


def main() -> None:
    backend = select_backend(sys.argv[1])
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    sizes = list(SIZES.items())[: int(sys.argv[3]) if len(sys.argv) > 3 else len(SIZES)]
    rng = np.random.default_rng(3)
    priors = Priors()
    for name, chains in sizes:
        L = chains * DRAWS
        theta = prior_centre(K, priors)[None] + 0.1 * rng.standard_normal((L, 2 * K + K * (K - 1)))
        rows = rng.standard_normal((chains, T))  # a chain's draws share its window
        per_draw = np.repeat(rows, DRAWS, axis=0)
        ops = {
            "value_and_grad": partial(backend.hmm_value_and_grad, theta, per_draw, K, priors),
            "predictive": partial(backend.hmm_predictive, theta, rows, K, draws_per_row=DRAWS),
        }
        for op, fn in ops.items():
            ms = timed(fn, repeats)
            print(json.dumps({"backend": backend.name, "adapter": backend.adapter, "size": name,
                              "draws": L, "op": op, "median_ms": round(float(np.median(ms)), 2),
                              "min_ms": round(min(ms), 2), "max_ms": round(max(ms), 2)}),
                  flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
