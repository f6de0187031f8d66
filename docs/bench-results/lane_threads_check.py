# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""The one-dispatch lane sampler at fewer threads per lane against 32:
`python docs/bench-results/lane_threads_check.py [THREADS [T]]` (default 4 and 256) runs one
warm batch of 8 instruments (K = 2, 4 chains, started from a numpy cold update) on the lane
sampler at 32 threads per lane and at THREADS, for several warm-up and draw counts, and
prints the largest draw difference between the two and how many draws' predictive
variances differ by more than 1 % (and the first of them, lane-major), and the smallest
predictive variance at THREADS (0 cannot be right: the variance of a next return). Draws
of chains that part after many iterations are expected (float32 sums in another order
flip an accept decision); a variance of 0 is not. Written when fewer threads seemed to
break the sampler; the cause was llvmpipe's loop limit (loop_limit_check.py)."""

import sys
from dataclasses import replace

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.wgpu_backend import WgpuBackend
from regime_model.batches import build_batch
from regime_model.update import ModelSpec, refresh


def main() -> None:
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    T = int(sys.argv[2]) if len(sys.argv) > 2 else 256
    n = 8
    series = 0.01 * regime_returns(n, T + 2, np.random.default_rng(0))
    keys, spec = np.arange(n, dtype=np.uint32), ModelSpec(extend_max=0, window=T)
    _, carries, _ = refresh(series[:, :T], [None] * n, keys, 1, 7, spec, NumpyBackend())
    backends = {lt: WgpuBackend(lane_threads=lt) for lt in (32, threads)}
    for draws, warmup in ((6, 2), (40, 2), (6, 15), (40, 15)):
        batch, _ = build_batch(series[:, 1 : T + 1], carries, keys, 2, 7,
                               replace(spec, draws=draws, warmup_warm=warmup))  # fmt: skip
        wide, narrow = (backends[lt].run_update(batch) for lt in (32, threads))
        variances = [r.predictive.var for r in (wide, narrow) if r.predictive is not None]
        log_var = [np.log(np.maximum(v, 1e-300)) for v in variances]
        bad = np.flatnonzero(np.abs(log_var[0] - log_var[1]) > 0.01)
        print(f"warm-up {warmup:2d}, draws {draws:2d}: max draw difference "
              f"{np.abs(wide.draws - narrow.draws).max():.3g}; predictive variances off "
              f"{len(bad)} of {len(log_var[0])}, first at {bad[:1].tolist()}; smallest variance "
              f"{variances[1].min():.3g}")


if __name__ == "__main__":
    main()
