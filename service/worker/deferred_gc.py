"""The cyclic garbage collector kept off the update's critical path.

CPython runs its cycle collector whenever allocations pass its thresholds, wherever in the
program that falls; a full (generation 2) collection of a worker's heap after start-up
took 22-50 ms on the dev VM (docs/benchmarks.md, twenty-ninth session). Falling inside an
update, such a pause is the update's: on the H200 host the strategy, checkpoint and
summary stages ran at 1.2-2.5 ms p50 and 12-21 ms p99. So a worker runs each update with
the collector paused and collects once the update is done, between bars, where nobody
waits for it. Reference counting still frees at once whatever is not in a reference
cycle; only cycles wait, for one update.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def deferred_collection() -> Iterator[None]:
    """The block with the cycle collector paused, then one full collection. Where the
    collector is off already (someone else manages it) the block runs as it is."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()
