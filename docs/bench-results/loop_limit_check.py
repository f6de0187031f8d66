# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Where llvmpipe's loop limit stops a one-dispatch run:
`python docs/bench-results/loop_limit_check.py [THREADS:T ...]` (default 32:64 32:128
32:256 8:256 4:128 4:256) runs one warm batch of 8 instruments (K = 2, 4 chains, 15 warm-up
iterations and 400 draws, started from a numpy cold update) on the lane sampler at THREADS
per lane and a window of T bars, first in ONE dispatch (the split switched off), then split
as the sampler does on a CPU adapter. It prints the iteration at which the single dispatch's
chains stopped (the sampler's own check), the gradient evaluations it had run by then, and
the split run's dispatches and whether all its draws moved. Needs a CPU adapter (lavapipe)."""

import sys
from dataclasses import replace

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import GpuCallError
from gpu_backend.wgpu_sampler import plan
from regime_model.batches import build_batch
from regime_model.update import ModelSpec, refresh


def check(threads: int, T: int, n: int = 8) -> None:
    series = 0.01 * regime_returns(n, T + 2, np.random.default_rng(0))
    keys, spec = np.arange(n, dtype=np.uint32), ModelSpec(extend_max=0, window=T)
    _, carries, _ = refresh(series[:, :T], [None] * n, keys, 1, 7, spec, NumpyBackend())
    batch, _ = build_batch(series[:, 1 : T + 1], carries, keys, 2, 7,
                           replace(spec, draws=400, warmup_warm=15))  # fmt: skip
    backend = WgpuBackend(lane_threads=threads)
    lane = backend.lane_sampler
    assert lane is not None and lane.bounded_loops, "a CPU adapter (lavapipe) is needed"
    lane.bounded_loops = False
    stopped = "ran to the end"
    try:
        backend.run_update(batch)
    except GpuCallError as error:
        at = int(str(error).split("stopped at iteration ")[1].split()[0])
        gradients = 1 + int((plan(batch).steps[0, :at].astype(np.int64) + 1).sum())
        stopped = f"stopped at iteration {at} (about {gradients} gradients and filters)"
    lane.bounded_loops = True
    before = lane.dispatches
    result = backend.run_update(batch)
    moved = bool((np.abs(result.draws).sum(axis=2) > 0).all())
    chunk = -(-T // threads)
    print(f"{threads:2d} threads, T {T:3d} (chunks of {chunk:2d} bars): one dispatch {stopped}; "
          f"split: {lane.dispatches - before} dispatches, every draw moved: {moved}")


if __name__ == "__main__":
    pairs = sys.argv[1:] or ["32:64", "32:128", "32:256", "8:256", "4:128", "4:256"]
    for pair in pairs:
        threads, T = (int(x) for x in pair.split(":"))
        check(threads, T)
