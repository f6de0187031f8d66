# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""How many of one account's instruments run on at each bar of the synthetic market, and
why: the gate, two readings, or either (issue 15, item 1; what it costs issue 14).

    python docs/bench-results/run_on_share.py INSTRUMENTS BARS     # a line per warm bar
"""

from __future__ import annotations

import sys

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.numpy_backend import NumpyBackend
from regime_model.update import ModelSpec, needs_more, refresh
from service.bench.stages import symbols
from service.market.synthetic import SyntheticMarket


def main() -> None:
    n, bars, T = int(sys.argv[1]), int(sys.argv[2]), 256
    market, names = SyntheticMarket(), symbols(n)
    history = market.history(names, market.bar_time(T + bars + 1), T + bars + 1)
    closes = np.array([[b.close for b in history[s]] for s in names])
    returns = np.diff(np.log(closes), axis=1)
    spec, keys = ModelSpec(extend_max=0), np.arange(n)
    _, carries, _ = refresh(returns[:, :T], [None] * n, keys, 1, 5, spec, NumpyBackend())
    for b in range(1, bars + 1):
        est, carries, _ = refresh(returns[:, b : b + T], carries, keys, b + 1, 5, spec,
                                  NumpyBackend())  # fmt: skip
        two = est.shift_acceptance > spec.two_readings
        print(f"bar {b}: of {n}, fail the gate {int((~est.converged).sum())}, two readings "
              f"{int(two.sum())}, run on {int(needs_more(est, spec).sum())}", flush=True)


if __name__ == "__main__":
    main()
