# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Warm updates of one batch on the samplers a CPU adapter could run:
`python docs/bench-results/cpu_adapter_samplers.py N UPDATES BACKEND...` runs a cold
update then UPDATES warm ones of N instruments (T = 256, K = 2, the daemon's ModelSpec)
on each BACKEND: `numpy`; `wgpu` (as `select_backend` builds it: on a CPU adapter such
as lavapipe, the sampler that dispatches per step in one submission until the
twenty-seventh session, since then the lane sampler at its subgroup size, 8); `laneL`
(wgpu with its threads per lane set to L: the one-dispatch lane sampler at L, as on a GPU
at 32; `lane0` the sampler that dispatches per step, a thread per lane). It
prints each warm update's wall ms, the last update's parts, the instrument-blocks run on
per update and how many instruments passed the gate at the last one."""

import sys
import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend import select_backend
from gpu_backend.identity import regime_returns
from gpu_backend.wgpu_backend import WgpuBackend
from regime_model.backend import Backend
from regime_model.update import ModelSpec, refresh


def _backend(name: str) -> Backend:
    if name.startswith("lane"):
        return WgpuBackend(lane_threads=int(name[4:]))
    return select_backend(name)


def main() -> None:
    n, updates = int(sys.argv[1]), int(sys.argv[2])
    series = 0.01 * regime_returns(n, 256 + updates + 1, np.random.default_rng(0))
    keys, spec = np.arange(n, dtype=np.uint32), ModelSpec()
    for name in sys.argv[3:]:
        backend = _backend(name)
        _, carries, _ = refresh(series[:, :256], [None] * n, keys, 1, 7, spec, backend)
        walls, extended = [], []
        for seq in range(2, updates + 2):
            t0 = time.perf_counter()
            estimate, carries, info = refresh(series[:, seq - 1 : seq + 255], carries, keys,
                                              seq, 7, spec, backend)  # fmt: skip
            walls.append(round(1e3 * (time.perf_counter() - t0), 1))
            extended.append(info.extended)
        parts = {k: round(v, 1) for k, v in info.timings_ms.items()}
        print(f"{name}: warm ms {walls} (median {np.median(walls):.1f}); last {parts}; "
              f"run on {extended}; passed the gate {int(estimate.converged.sum())} of {n}",
              flush=True)


if __name__ == "__main__":
    main()
