# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""What a gradient costs inside the one-dispatch lane sampler, by threads per lane and
window: `python docs/bench-results/lane_latency.py [N [THREADS:T ...]]` (defaults 8 and
8:256 16:256 32:256 64:256 32:128 32:64) runs one warm batch of N instruments (K = 2, 4
chains, the daemon's 15 warm-up iterations and 40 draws, after a cold update on the same
backend) on the lane sampler, 4 times after one untimed run, and prints one JSON line per
setting:
the median run's wall ms, the gradient evaluations per lane and the microseconds per
gradient (wall / gradients: a lane's gradients run one after another, so at few lanes this
is the latency of one). Shows whether the chunk's bars or the fixed part of a gradient
(scans, reductions, thread 0's sampler steps) sets the run's length."""

import json
import sys
import time
from typing import Any

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.wgpu_backend import WgpuBackend
from regime_model.batches import build_batch
from regime_model.update import ModelSpec, refresh


def timed_runs(
    backend: WgpuBackend, batch: Any, runs: int, device_ms: list[float] | None = None
) -> tuple[list[float], int]:
    """The wall ms of `runs` runs of `batch`, one after another, and a lane's gradients;
    each run's device ms (its compute pass's timestamps) appended to `device_ms` where the
    backend profiles."""
    walls, evals = [], 0
    for _ in range(runs):
        ns, t0 = backend.kernels.gpu_ns, time.perf_counter()
        result = backend.run_update(batch)
        walls.append(1e3 * (time.perf_counter() - t0))
        if device_ms is not None:
            device_ms.append(1e-6 * (backend.kernels.gpu_ns - ns))
        evals = int(result.gradient_evals)
    return walls, evals


def measure(n: int, threads: int, T: int, runs: int = 4) -> dict[str, object]:
    series = 0.01 * regime_returns(n, T + 2, np.random.default_rng(0))
    keys, spec = np.arange(n, dtype=np.uint32), ModelSpec(extend_max=0, window=T)
    backend = WgpuBackend(lane_threads=threads)
    _, carries, _ = refresh(series[:, :T], [None] * n, keys, 1, 7, spec, backend)
    batch, _ = build_batch(series[:, 1 : T + 1], carries, keys, 2, 7, spec)
    lane = backend.lane_sampler
    assert lane is not None
    backend.run_update(batch)  # compiles, allocates
    walls, evals = timed_runs(backend, batch, runs)
    wall = float(np.median(walls))
    return {"instruments": n, "lanes": 4 * n, "threads": threads, "T": T,
            "chunk": -(-T // threads), "wall_ms": round(wall, 2),
            "walls_ms": [round(w, 2) for w in walls], "gradients_per_lane": evals,
            "us_per_gradient": round(1e3 * wall / max(evals, 1), 2),
            "dispatches": getattr(lane, "dispatches", None),  # None: a tree before the split
            "adapter": backend.device.info.adapter}  # fmt: skip


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    pairs = sys.argv[2:] or ["8:256", "16:256", "32:256", "64:256", "32:128", "32:64"]
    for pair in pairs:
        threads, T = (int(x) for x in pair.split(":"))
        print(json.dumps(measure(n, threads, T)), flush=True)
