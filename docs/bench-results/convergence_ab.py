# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""convergence() before and after a change, in one process, alternated: the old module is
loaded from a copy of regime_model/diagnostics.py (the parent commit's), the new one is
the checkout's. Checks the two give the same bits; prints the best of 7 calls per round.

    git show PARENT:regime_model/diagnostics.py > /tmp/old_diagnostics.py
    python docs/bench-results/convergence_ab.py /tmp/old_diagnostics.py

Shapes: a trial account's first batch (54 instruments x 4 chains) and its wide group
(19 x 32), 40 draws of 6 parameters and the 2 decision quantities, a third repeated (as
rejections repeat a position).
"""

from __future__ import annotations

import importlib.util
import sys
import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
from regime_model import diagnostics as new
import numpy as np


def main(old_path: str) -> None:
    spec = importlib.util.spec_from_file_location("old_diagnostics", old_path)
    assert spec is not None and spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    g = np.random.default_rng(0)
    for shape in [(54, 4, 40, 8), (19, 32, 40, 8)]:
        d = g.standard_normal(shape)
        d[:, :, 1::3] = d[:, :, 0::3][:, :, :13]
        a, b = old.convergence(d), new.convergence(d)
        same = all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b, strict=True))
        best: dict[str, list[float]] = {"old": [], "new": []}
        for _ in range(3):
            for name, module in (("old", old), ("new", new)):
                times = []
                for _ in range(7):
                    t0 = time.perf_counter()
                    module.convergence(d)
                    times.append(time.perf_counter() - t0)
                best[name].append(round(1e3 * min(times), 1))
        print(shape, "same bits:", same, best)


if __name__ == "__main__":
    main(sys.argv[1])
