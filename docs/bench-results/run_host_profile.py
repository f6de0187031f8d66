# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Where a warm run's host time goes: `python docs/bench-results/run_host_profile.py [N]`
(default 190: a trial account's first run, 760 lanes) builds a backend with the lane
sampler at 8 threads per lane (lavapipe's subgroup; on a GPU pass its own 32 with
LANE_THREADS=32), runs one warm batch of N instruments untimed, then three under cProfile,
and prints the functions with the most time of their own: the wait for the mapped
read-back is the device's, the rest the host's (twenty-seventh session, docs/benchmarks.md)."""

import cProfile
import os
import pstats
import sys

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.wgpu_backend import WgpuBackend
from regime_model.batches import build_batch
from regime_model.update import ModelSpec, refresh


def main() -> None:
    n, T = (int(sys.argv[1]) if len(sys.argv) > 1 else 190), 256
    series = 0.01 * regime_returns(n, T + 2, np.random.default_rng(0))
    keys = np.arange(n, dtype=np.uint32)
    spec = ModelSpec(extend_max=0, window=T, warmup_cold=30)  # a short cold start: its carries
    backend = WgpuBackend(lane_threads=int(os.environ.get("LANE_THREADS", "8")))
    _, carries, _ = refresh(series[:, :T], [None] * n, keys, 1, 7, spec, backend)
    batch, _ = build_batch(series[:, 1 : T + 1], carries, keys, 2, 7, spec)
    backend.run_update(batch)  # compiles, allocates
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(3):
        backend.run_update(batch)
    profile.disable()
    pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
