# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""The narrow summary pass in any tree (issue 14, twenty-eighth session): `python
docs/bench-results/narrow_pass_trees.py NAME`, run with a tree's packages first on
PYTHONPATH, times gpu_backend.run_summary.DeviceSummary.alone (its buffers made, the pass
recorded, submitted and read back) over 36 narrow instruments (4 chains x 40 draws, K = 2,
P(turbulent) tied at 1 in 30 % of draws) on the default adapter, 15 times after one, and
prints NAME, the median and the minimum ms. It takes either signature of `alone` (the
chains argument went in 38cc67a), so trees before and after the session compare.
"""

import inspect
import sys
import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.wgpu_device import open_device
from gpu_backend.run_summary import DeviceSummary
K, S, D, C, n = 2, 40, 6, 4, 36
gen = np.random.default_rng(3)
L = n * C
draws = gen.standard_normal((L, S, D)).astype(np.float32).astype(np.float64)
p = np.where(gen.random((L, S)) < 0.3, 1.0, gen.random((L, S)))
var = np.exp(gen.normal(-8, 0.3, (L, S)))
pred = np.stack([1 - p, p, 1e-3 * gen.standard_normal((L, S)), var], -1).reshape(L * S, 4)
first = np.arange(0, L + 1, C)
dev = open_device()
params = inspect.signature(DeviceSummary.__init__).parameters
summary = DeviceSummary(dev.handle, (K,), **({"wide": False} if "wide" in params else {}))
new = "chains" not in inspect.signature(DeviceSummary.alone).parameters
args = (draws, pred, first, K) if new else (draws, pred, first, C, K)
run = lambda: summary.alone(*args)  # noqa: E731
run()
ts = []
for _ in range(15):
    t = time.perf_counter()
    run()
    ts.append(1e3 * (time.perf_counter() - t))
print(sys.argv[1], "median ms", round(float(np.median(ts)), 2), "min", round(min(ts), 2))
