# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Why instruments run wide (issue 14: the trial round's first run is mostly wide lanes):
`python docs/bench-results/wide_reasons.py N UPDATES [synthetic|identity]`.

N instruments (T 256, K 2, the daemon's ModelSpec, numpy) updated UPDATES + 1 times, each
on the next window (a bar on), from a cold start: on the daemon's synthetic market
(R0000..., as `bench round` trades them) or on gpu_backend.identity's regime returns.
One JSON line per update: its seconds, how many carries are wide (more than `chains`
chains: their next update starts with them), the instrument-blocks run on, how many
windows have two readings (the level-shift move's acceptance above `two_readings`: they
stay wide) and how many of those are wide, and for the other wide ones the chains at
which their Monte Carlo errors would just pass the gate (this run's chains x the largest
ratio of error to bound, squared).
"""

import json
import sys
import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from regime_model.update import ModelSpec, refresh
from service.market.synthetic import SyntheticMarket

T = 256


def returns_of(N: int, bars: int, market: str) -> np.ndarray:
    if market == "identity":
        return 0.01 * regime_returns(N, bars, np.random.default_rng(5))
    feed = SyntheticMarket()
    batch = feed.history_batch([f"R{i:04d}" for i in range(N)], feed.bar_time(bars + 400),
                               bars + 1)  # fmt: skip
    closes = batch.values[:, 3].reshape(N, -1)  # open, high, low, close, volume
    return np.diff(np.log(closes), axis=1)


def main() -> None:
    N, updates = int(sys.argv[1]), int(sys.argv[2])
    market = sys.argv[3] if len(sys.argv) > 3 else "synthetic"
    spec = ModelSpec(window=T)
    series = returns_of(N, T + updates + 1, market)
    keys = np.arange(N, dtype=np.uint32)
    backend, carries = NumpyBackend(), [None] * N
    for u in range(updates + 1):
        t0 = time.perf_counter()
        estimate, carries, info = refresh(series[:, u : u + T], carries, keys, u + 1, 7, spec,
                                          backend, diagnose="none")  # fmt: skip
        chains = np.array([len(c.position) for c in carries], dtype=np.float64)
        ratio = np.maximum(estimate.p_turbulent_mcse / spec.mcse_max,
                           estimate.vol_mcse / spec.vol_mcse_max)  # fmt: skip
        two = estimate.shift_acceptance > spec.two_readings
        wide = chains > spec.chains
        print(json.dumps({
            "update": u, "market": market, "instruments": N,
            "seconds": round(time.perf_counter() - t0, 1), "wide": int(wide.sum()),
            "ran_on": info.extended, "two_readings": int(two.sum()),
            "two_readings_wide": int((two & wide).sum()),
            "other_wide_chains_needed": np.round(np.sort((chains * ratio**2)[wide & ~two]),
                                                 1).tolist(),
        }), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
