# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""The slowest instruments' ESS by a warm update's leapfrog steps, on the CPU: `python
docs/bench-results/worst_steps.py [MIN:MAX ...]` (default 3:6 4:8 4:10 5:10 6:12 8:16).
Takes the six instruments of `bench model`'s trial shape whose chained ESS was lowest at
3-6 steps (worst_instruments.py, twenty-third session: 134, 131, 186, 89, 163, 196) with
their own keys, so that their chains are those of the batch of 268 (each lane's random
streams are its own, the step counts the batch's from seed and update), and for each range
of steps (ModelSpec.steps_min, steps_max; every update's, cold included) runs numpy as
`bench model` does: a cold and a warm update, then 5 chained warm updates of one window.
One JSON line per range: each instrument's worst bulk ESS over the joined 4 x 200 draws,
the gradient evaluations of the chained updates, and the last update's step sizes and
acceptance."""

import json
import sys
import time
from dataclasses import replace

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.bench.chained_ess import chained_runs, model_start
from gpu_backend.numpy_backend import NumpyBackend
from regime_model.diagnostics import bulk_ess
from regime_model.update import ModelSpec
from service.commands.bench import SHAPES, _synthetic_returns

WORST = np.array([134, 131, 186, 89, 163, 196])


def run(lo: int, hi: int, updates: int = 5) -> dict[str, object]:
    returns, keys, backend = _synthetic_returns(SHAPES["trial"])[WORST], WORST, NumpyBackend()
    spec = replace(ModelSpec(), steps_min=lo, steps_max=hi, cold_steps_min=lo, cold_steps_max=hi)
    t0 = time.perf_counter()
    window, carries = model_start(returns, keys, spec, backend)
    ran = chained_runs(backend, window, carries, keys, 3, 7, spec, updates)
    ess, estimate, evals = bulk_ess(ran.draws).min(axis=1), ran.estimate, ran.gradient_evals
    return {"steps": [lo, hi], "instruments": WORST.tolist(),
            "worst_ess": np.round(ess, 1).tolist(), "gradient_evals": evals,
            "step_size": np.round(estimate.step_size, 3).tolist(),
            "acceptance": np.round(estimate.acceptance, 2).tolist(),
            "seconds": round(time.perf_counter() - t0, 1)}  # fmt: skip


if __name__ == "__main__":
    for pair in sys.argv[1:] or ["3:6", "4:8", "4:10", "5:10", "6:12", "8:16"]:
        lo, hi = (int(x) for x in pair.split(":"))
        print(json.dumps(run(lo, hi)), flush=True)
