# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""One account's updates on the synthetic market, one process (issue 14, twenty-ninth
session): `python docs/bench-results/synthetic_updates.py N UPDATES [BACKEND]` updates N
instruments of the daemon's synthetic market (wide_reasons.py's windows, T 256, K 2, 4
chains, the daemon's ModelSpec) from a cold start, then UPDATES warm times, a bar on each
time, on BACKEND (`wgpu`, `numpy` or `auto`; default wgpu), and prints one JSON line per
update: its wall ms, the instruments that start it wide, those that ran on and its parts'
ms. Two of it side by side is what two workers on a two-core VM ask of its cores."""

import json
import sys
import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend import select_backend
from regime_model.update import ModelSpec, refresh
from wide_reasons import T, returns_of  # beside this script


def main() -> None:
    N, updates = int(sys.argv[1]), int(sys.argv[2])
    backend = select_backend(sys.argv[3] if len(sys.argv) > 3 else "wgpu")
    spec = ModelSpec(window=T)
    series = returns_of(N, T + updates + 1, "synthetic")
    keys = np.arange(N, dtype=np.uint32)
    carries: list = [None] * N
    for u in range(updates + 1):
        wide = sum(c is not None and len(c.position) > spec.chains for c in carries)
        t0 = time.perf_counter()
        _, carries, info = refresh(series[:, u : u + T], carries, keys, u + 1, 7, spec, backend,
                                   diagnose="failing")  # fmt: skip
        print(json.dumps({
            "update": u, "ms": round(1e3 * (time.perf_counter() - t0), 1), "wide_start": wide,
            "ran_on": info.extended,
            "parts_ms": {k: round(v, 1) for k, v in info.timings_ms.items()},
        }), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
