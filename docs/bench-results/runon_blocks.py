# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""How a warm update's run-on is made up: `python docs/bench-results/runon_blocks.py [N]
[BACKEND] [UPDATES]` (default 54 instruments, the trial round's account size, on wgpu,
12 warm updates after a cold one; T = 256, K = 2, 4 chains, the daemon's ModelSpec)
prints one JSON line per warm update: its parts (RefreshInfo.timings_ms), the
instrument-blocks run on, and each device run of the update (run_together: the first
run, then one per run-on block) with its lanes and wall time in ms. The device runs'
sum against the run-on says how much of the run-on is the device and how much the host
between blocks. With DIAGNOSTICS=at-end, the deferred diagnostics run when the update asks
for them, at its end, instead of on their threads beside the update's host work (whether
those threads slow it, e.g. by holding the GIL); with DIAGNOSTICS=unconverged, the
daemon's update: only the instruments that fail the gate are diagnosed. With PROFILE=PATH
set, the warm updates run under cProfile and PATH gets the functions with the most time of
their own, then with the most time in all."""

import cProfile
import io
import json
import os
import pstats
import sys
import time
from typing import Any

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend import select_backend
from gpu_backend.identity import regime_returns
from regime_model import deferred_diagnostics, update
from regime_model.update import ModelSpec, refresh

RUNS: list[dict[str, Any]] = []


def timed_runs() -> None:
    """update.run_together with each call's lanes and wall time recorded in RUNS."""
    original = update.run_together

    def run(backend: Any, batches: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(backend, batches)
        finally:
            RUNS.append({"lanes": int(sum(len(b.y) for b in batches)),
                         "ms": round(1e3 * (time.perf_counter() - start), 2)})

    update.run_together = run


class _Later:
    """A future whose call runs when its result is asked for."""

    def __init__(self, fn: Any, *args: Any) -> None:
        self.call = lambda: fn(*args)

    def result(self) -> Any:
        return self.call()


class _AtEnd:
    """A pool that runs nothing until a result is asked for (DIAGNOSTICS=at-end)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def submit(self, fn: Any, *args: Any) -> _Later:
        return _Later(fn, *args)

    def shutdown(self, **kwargs: Any) -> None:
        pass


def main() -> None:
    if os.environ.get("DIAGNOSTICS") == "at-end":
        deferred_diagnostics.ThreadPoolExecutor = _AtEnd  # type: ignore[assignment,misc]
    failing_only = os.environ.get("DIAGNOSTICS") == "unconverged"
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 54
    backend = select_backend(sys.argv[2] if len(sys.argv) > 2 else "wgpu")
    updates = int(sys.argv[3]) if len(sys.argv) > 3 else 12
    series = 0.01 * regime_returns(n, 256 + updates + 1, np.random.default_rng(0))
    keys, spec = np.arange(n, dtype=np.uint32), ModelSpec()
    _, carries, _ = refresh(series[:, :256], [None] * n, keys, 1, 7, spec, backend)
    timed_runs()
    profile = cProfile.Profile() if os.environ.get("PROFILE") else None
    for seq in range(2, updates + 2):
        RUNS.clear()
        if profile is not None:
            profile.enable()
        _, carries, info = refresh(series[:, seq - 1 : seq + 255], carries, keys, seq, 7,
                                   spec, backend, diagnose="failing" if failing_only else "all")
        if profile is not None:
            profile.disable()
        print(json.dumps({"seq": seq, "instruments": n, "backend": backend.name,
                          "timings_ms": {k: round(v, 2) for k, v in info.timings_ms.items()},
                          "diagnostics": os.environ.get("DIAGNOSTICS", "threads"),
                          "extended": info.extended, "gradient_evals": info.gradient_evals,
                          "device_runs": RUNS}), flush=True)
    if profile is not None:
        text = io.StringIO()
        stats = pstats.Stats(profile, stream=text)
        stats.sort_stats("tottime").print_stats(45)
        stats.sort_stats("cumulative").print_stats(60)
        with open(os.environ["PROFILE"], "w") as out:
            out.write(text.getvalue())


if __name__ == "__main__":
    main()
