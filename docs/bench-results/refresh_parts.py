"""Where one account's update goes: `refresh` on the wgpu backend, cold then warm,
with its own parts (`RefreshInfo.timings_ms`: the backend's run, the host's summary and
diagnostics, the extension blocks), as JSON lines.

    python docs/bench-results/refresh_parts.py 54 268 > parts.jsonl

Each argument is a batch size (instruments, 4 chains, T = 256, K = 2, the daemon's
ModelSpec); 1 cold and 8 warm updates per size, in one process, as a worker runs them.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.wgpu_backend import WgpuBackend
from regime_model.update import InstrumentCarry, ModelSpec, refresh

WARM = 8


def main(sizes: list[int]) -> None:
    spec = ModelSpec()
    backend = WgpuBackend()  # the GPU's figures; numpy's are in `bench round`
    for n in sizes:
        series = 0.01 * regime_returns(n, spec.window + WARM + 1, np.random.default_rng(0))
        keys = np.arange(n, dtype=np.uint32)
        carries: list[InstrumentCarry | None] = [None] * n
        for seq in range(1, WARM + 2):
            t0 = time.perf_counter()
            window = series[:, seq - 1 : seq - 1 + spec.window]
            _, new, info = refresh(window, carries, keys, seq, 1, spec, backend)
            row = {"instruments": n, "seq": seq, "cold": seq == 1,
                   "wall_ms": round(1e3 * (time.perf_counter() - t0), 1),
                   "parts_ms": {k: round(v, 1) for k, v in info.timings_ms.items()},
                   "extended": info.extended, "backend": backend.name,
                   "adapter": backend.adapter}  # fmt: skip
            print(json.dumps(row), flush=True)
            carries = list(new)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [54])
