# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Several accounts' warm batches in ONE dispatch against each account's run alone:
`python docs/bench-results/account_join.py [A [N [REPEATS]]]` (defaults 5, 54, 8).

A accounts of N instruments (T 256, K 2, 4 chains, the daemon's ModelSpec), each with its
own returns, seed and update number (so its own step schedule), start warm from a cold
update on their own backend. Then REPEATS times, alternated: `alone`, each account's
warm batch on its own backend one after another (what the daemon's worker processes ask
of one GPU, without the time-slicing between their contexts), and `joined`, the A batches
in one run on one backend (regime_model.batch_join: what a process serving every account
would submit). The first repeat checks the joined run's draws are each run's alone, bit
for bit. One JSON line per repeat: each way's wall ms (a run's write, submission, wait and
read back), the joined run's gradient calls and each account's alone.
"""

import json
from dataclasses import replace
import sys
import time
from typing import Any

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import open_device
from regime_model.batch_join import run_together
from regime_model.batches import build_batch
from regime_model.update import ModelSpec, refresh

T = 256


def _warm_batches(A: int, N: int, device: Any) -> tuple[list[WgpuBackend], list[Any]]:
    spec = ModelSpec(window=T)
    backends, batches = [], []
    for a in range(A):
        returns = 0.01 * regime_returns(N, T + 1, np.random.default_rng(100 + a))
        keys = np.arange(a * N, (a + 1) * N, dtype=np.uint32)
        seed, seq = 7 + a, 3 + 2 * a
        backend = WgpuBackend(device, wake_clocks=False)
        # no run-on, so that no instrument's carry is wide (a wide one is a batch apart)
        _, carries, _ = refresh(returns[:, :-1], [None] * N, keys, seq - 1, seed,
                                replace(spec, extend_max=0), backend, diagnose="none")  # fmt: skip
        batches.append(build_batch(returns[:, 1:], carries, keys, seq, seed, spec)[0])
        backends.append(backend)
    return backends, batches


def main() -> None:
    A = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    N = int(sys.argv[2]) if len(sys.argv) > 2 else 54
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    device = open_device()
    backends, batches = _warm_batches(A, N, device)
    shared = WgpuBackend(device, wake_clocks=False)
    for r in range(repeats):
        t0 = time.perf_counter()
        alone = [b.run_update(x) for b, x in zip(backends, batches, strict=True)]
        alone_ms = 1e3 * (time.perf_counter() - t0)
        t0 = time.perf_counter()
        joined = run_together(shared, batches)
        joined_ms = 1e3 * (time.perf_counter() - t0)
        same = all(np.array_equal(j.draws, a.draws) for j, a in zip(joined, alone, strict=True))
        if r == 0 and not same:
            raise SystemExit("account_join: the joined run's draws differ from the runs alone")
        print(json.dumps({
            "repeat": r, "accounts": A, "instruments": N, "adapter": shared.adapter,
            "alone_ms": round(alone_ms, 2), "joined_ms": round(joined_ms, 2),
            "alone_runs_ms": [round(x.timings_ms.get("device_update", 0.0), 2) for x in alone],
            "joined_gradient_calls": joined[0].gradient_evals,
            "alone_gradient_calls": [x.gradient_evals for x in alone], "same_bits": same,
        }), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
