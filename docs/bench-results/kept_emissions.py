# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Each bar's emission kept for a gradient's two passes after the chunk's product, or
computed in each (issue 14, twenty-ninth session): `python
docs/bench-results/kept_emissions.py [--threads L] [--pairs P] N` runs one warm batch of N
instruments (K = 2, 4 chains, T = 256, the daemon's 15 warm-up iterations and 40 draws,
after a cold update on the same backend) on the lane sampler at L threads per lane
(default: the device's subgroup size, lavapipe's 8), the two modules alternated P times in
ONE process (each compiled first; a VM's neighbours move its speed from minute to minute,
so runs of the two side by side, not in two processes), checks that both give the same
draws, and prints one JSON line: each way's wall ms per run and their medians."""

import argparse
import json
import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.wgpu_backend import WgpuBackend
from regime_model.batches import build_batch
from regime_model.update import ModelSpec, refresh


def main() -> None:
    parser = argparse.ArgumentParser(description="emissions kept or computed in each pass")
    parser.add_argument("--threads", type=int, default=0, help="0: the subgroup size")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("instruments", type=int)
    a = parser.parse_args()
    n, T = a.instruments, 256
    series = 0.01 * regime_returns(n, T + 2, np.random.default_rng(0))
    keys, spec = np.arange(n, dtype=np.uint32), ModelSpec(extend_max=0, window=T)
    backend = WgpuBackend()
    threads = a.threads or backend.device.info.subgroup_size
    backend = WgpuBackend(backend.device, lane_threads=threads)
    _, carries, _ = refresh(series[:, :T], [None] * n, keys, 1, 7, spec, backend)
    batch, _ = build_batch(series[:, 1 : T + 1], carries, keys, 2, 7, spec)
    lane = backend.lane_sampler
    assert lane is not None
    walls: dict[bool, list[float]] = {False: [], True: []}
    draws = {}
    for keep in (False, True):  # compiles each module; their draws must agree
        lane.keep_emissions = keep
        draws[keep] = backend.run_update(batch).draws
    same = bool(np.array_equal(draws[False], draws[True]))
    for _ in range(a.pairs):
        for keep in (False, True):
            lane.keep_emissions = keep
            t0 = time.perf_counter()
            backend.run_update(batch)
            walls[keep].append(1e3 * (time.perf_counter() - t0))
    print(json.dumps({
        "instruments": n, "lanes": 4 * n, "threads": threads, "same_draws": same,
        "adapter": backend.device.info.adapter,
        "computed_ms": [round(w, 2) for w in walls[False]],
        "kept_ms": [round(w, 2) for w in walls[True]],
        "computed_median_ms": round(float(np.median(walls[False])), 2),
        "kept_median_ms": round(float(np.median(walls[True])), 2),
    }), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
