# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""How a warm update's device time grows with its lanes (issue 14): is one submission's
time flat in the lanes (latency: merging batches pays) or proportional (throughput: it
does not)? Warm updates of N instruments x C chains (T 256, K 2, wgpu, no run-on), three
back to back, then two after a 3 s pause each. One JSON line per shape.

    python docs/bench-results/lanes_latency.py [--lane-threads LT] N:C [N:C ...]

`--lane-threads`: threads per lane of the scan kernels (the backend's default if left out).
"""

from __future__ import annotations

import json
import sys
import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.wgpu_backend import WgpuBackend
from regime_model.update import ModelSpec, refresh


PAUSES = (0.0, 0.0, 0.0, 3.0, 3.0)  # seconds before each warm update


def main() -> None:
    shapes, lane_threads = sys.argv[1:], None
    if shapes[:1] == ["--lane-threads"]:
        lane_threads, shapes = int(shapes[1]), shapes[2:]
    backend, T = WgpuBackend(lane_threads=lane_threads), 256
    for shape in shapes:
        N, C = (int(x) for x in shape.split(":"))
        spec = ModelSpec(chains=C, extend_max=0)
        returns = 0.01 * regime_returns(N, T + 10, np.random.default_rng(3))
        keys = np.arange(N, dtype=np.uint32)
        _, carries, _ = refresh(returns[:, :T], [None] * N, keys, 0, 1, spec, backend)
        rows = []
        for seq, pause in enumerate(PAUSES, start=1):
            time.sleep(pause)
            t0 = time.perf_counter()
            _, carries, info = refresh(returns[:, seq : seq + T], carries, keys, seq, 1, spec,
                                       backend)  # fmt: skip
            wall = 1e3 * (time.perf_counter() - t0)
            rows.append([pause, round(wall, 1), round(info.timings_ms["device_update"], 1)])
        print(json.dumps({"lane_threads": backend.kernels.lane_threads,
                          "instruments": N, "chains": C, "lanes": N * C,
                          "[pause_s, wall_ms, device_update_ms]": rows}), flush=True)


if __name__ == "__main__":
    main()
