# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""A warm update's host work alone, profiled: `python docs/bench-results/replay_host.py
record N UPDATES` runs a cold update and UPDATES warm ones of N instruments (T = 256,
K = 2, the daemon's ModelSpec) on the wgpu backend with the one-dispatch lane sampler
forced on (a GPU's path, here on whatever adapter there is, lavapipe included) and keeps
every device run's results in /tmp/replay-N.pkl; `replay N UPDATES` runs the same warm
updates three times with each device run replaced by its recorded results, so that what
is timed is the update's host work: the summaries, the run-on blocks' batches and
estimates, the deferred diagnostics (which here cannot overlap a device run). It prints
each pass's wall time per update and the last update's parts, and writes the third
pass's profile to /tmp/replay-N-profile.txt and /tmp/replay-N.pstats. `compare N UPDATES`
replays them four times instead, the deferred diagnostics on their threads and at the
update's end (runon_blocks.py's DIAGNOSTICS=at-end) alternated, and prints each pass's
medians of the parts: whether the diagnostics' threads slow the update's own host work.
The updates are deterministic, so the replayed batches are the recorded ones."""

import cProfile
import io
import json
import pickle
import pstats
import sys
import time
from typing import Any

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.lane_threads import LANE_THREADS
from regime_model import deferred_diagnostics, update
from regime_model.update import ModelSpec, refresh


def _replaying(recorded: Any) -> Any:
    """update.run_together that gives the recorded runs in their order."""
    return lambda backend, batches: next(recorded)


def _replay(recorded: Any, first: Any, windows: Any, keys: Any, spec: Any, backend: Any,
            ) -> tuple[list[float], list[dict[str, float]]]:  # fmt: skip
    """One pass over the recorded updates: each update's host ms and its parts."""
    update.run_together = _replaying(iter(recorded))
    carries, walls, parts = first, [], []
    for seq, window in windows:
        t0 = time.perf_counter()
        _, carries, info = refresh(window, carries, keys, seq, 7, spec, backend)
        walls.append(1e3 * (time.perf_counter() - t0))
        parts.append(info.timings_ms)
    return walls, parts


def compare(recorded: Any, first: Any, windows: Any, keys: Any, spec: Any, backend: Any) -> None:
    """Four replays, the diagnostics on threads and at the end alternated."""
    from runon_blocks import _AtEnd  # noqa: PLC0415 - beside this script

    threads = deferred_diagnostics.ThreadPoolExecutor
    for mode in ("threads", "at-end", "threads", "at-end"):
        deferred_diagnostics.ThreadPoolExecutor = threads if mode == "threads" else _AtEnd
        walls, parts = _replay(recorded, first, windows, keys, spec, backend)
        medians = {k: round(float(np.median([p.get(k, 0.0) for p in parts])), 1)
                   for k in ("summary", "extension", "diagnostics")}  # fmt: skip
        print(json.dumps({"mode": mode, "host_ms_median": round(float(np.median(walls)), 1),
                          **medians}), flush=True)  # fmt: skip
    deferred_diagnostics.ThreadPoolExecutor = threads


def main() -> None:
    mode, n, updates = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    series = 0.01 * regime_returns(n, 256 + updates + 1, np.random.default_rng(0))
    keys, spec = np.arange(n, dtype=np.uint32), ModelSpec()
    backend = WgpuBackend(lane_threads=LANE_THREADS)
    _, first, _ = refresh(series[:, :256], [None] * n, keys, 1, 7, spec, backend)
    windows = [(seq, series[:, seq - 1 : seq + 255]) for seq in range(2, updates + 2)]
    if mode == "record":
        runs: list[Any] = []
        original = update.run_together

        def recording(b: Any, batches: Any) -> Any:
            runs.append(original(b, batches))
            return runs[-1]

        update.run_together = recording
        carries = first
        for seq, window in windows:
            _, carries, info = refresh(window, carries, keys, seq, 7, spec, backend)
            print(seq, {k: round(v, 1) for k, v in info.timings_ms.items()}, flush=True)
        with open(f"/tmp/replay-{n}.pkl", "wb") as out:
            pickle.dump(runs, out)
        return
    with open(f"/tmp/replay-{n}.pkl", "rb") as source:
        recorded = pickle.load(source)
    if mode == "compare":
        compare(recorded, first, windows, keys, spec, backend)
        return
    profile = cProfile.Profile()
    for rep in range(3):
        if rep == 2:
            profile.enable()
        walls, parts = _replay(recorded, first, windows, keys, spec, backend)
        profile.disable()
        last = {k: round(v, 1) for k, v in parts[-1].items() if k != "device_update"}
        print(f"pass {rep + 1}: host ms per update {[round(w, 1) for w in walls]}, "
              f"the last one's parts {last}")
    text = io.StringIO()
    stats = pstats.Stats(profile, stream=text)
    stats.sort_stats("tottime").print_stats(30)
    stats.sort_stats("cumulative").print_stats(50)
    with open(f"/tmp/replay-{n}-profile.txt", "w") as out:
        out.write(text.getvalue())
    profile.dump_stats(f"/tmp/replay-{n}.pstats")


if __name__ == "__main__":
    main()
