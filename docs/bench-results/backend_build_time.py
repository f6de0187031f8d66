# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""What a wgpu backend costs to build (its pipelines compiled for K = 2, 3 and 4) at each
count of threads per lane: `python docs/bench-results/backend_build_time.py [LT ...]`
(default 0 8 0 8: a thread per lane, then lanes of 8 threads, alternated). One JSON line
per build: its wall seconds on the one device every build shares."""

import json
import sys
import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads

from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import open_device


def main() -> None:
    device = open_device()
    for lane_threads in [int(a) for a in sys.argv[1:]] or [0, 8, 0, 8]:
        t0 = time.perf_counter()
        backend = WgpuBackend(device, lane_threads=lane_threads)
        shuffles = backend.lane_sampler is not None and backend.lane_sampler.subgroups
        print(json.dumps({"lane_threads": lane_threads, "subgroups": shuffles,
                          "adapter": device.info.adapter,
                          "build_s": round(time.perf_counter() - t0, 2)}), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
