"""The fetch stage alone at 268 instruments: `bench stages`' Rig (a real Trader, the
synthetic market, the simulated broker) with a timer around Trader._fetch over 20 warm
updates. Prints the median and the best, in ms. docs/benchmarks.md, "The fetch stage's
per-symbol work"; run it in a checkout of each commit to compare.

    python docs/bench-results/fetch_time.py
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from service.bench.stages import Rig, write_config

folder = Path(tempfile.mkdtemp())
rig = Rig(write_config(folder, 268, 256), folder / "state", "numpy")
rig.trader.resume()
for n in range(2):  # the cold update and the first warm one (it buys most instruments)
    rig.update(n)
fetch, seconds = rig.trader._fetch, []


def timed(*args: Any) -> int:
    t0 = time.perf_counter()
    try:
        return fetch(*args)
    finally:
        seconds.append(time.perf_counter() - t0)


rig.trader._fetch = timed  # type: ignore[method-assign]
for n in range(2, 22):
    rig.update(n)
print(round(1e3 * statistics.median(seconds), 2), round(1e3 * min(seconds), 2))
