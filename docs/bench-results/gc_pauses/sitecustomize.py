"""Every cycle collection that takes over 0.5 ms, and every full one, of each Python
process started with this folder first on PYTHONPATH (issue 14, twenty-ninth session):

    PYTHONPATH=docs/bench-results/gc_pauses regime-trader bench round ...

appends a line per such collection to /tmp/gc-pauses-PID.txt: the wall time, the
generation, its ms, what it freed and (for a full one, counted after the timing) the
objects its generation holds. A measurement, not part of the daemon."""

import gc
import os
import time

_started: dict[str, float] = {}


def _timed(phase: str, info: dict) -> None:
    if phase == "start":
        _started["at"] = time.perf_counter()
        return
    ms = 1e3 * (time.perf_counter() - _started.get("at", time.perf_counter()))
    generation = info["generation"]
    if ms > 0.5 or generation == 2:
        held = len(gc.get_objects(2)) if generation == 2 else -1
        with open(f"/tmp/gc-pauses-{os.getpid()}.txt", "a") as out:
            out.write(f"{time.time():.3f} gen{generation} {ms:.2f}ms "
                      f"collected={info['collected']} tracked={held}\n")


gc.callbacks.append(_timed)
