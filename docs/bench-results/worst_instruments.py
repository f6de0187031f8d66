# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Which instruments mix slowest, and in which parameter (issue 14's NumPyro ratio reads the
worst): `python docs/bench-results/worst_instruments.py [SHAPE] [BACKEND] [R] [WORST]`
(default trial, numpy, 5 chained updates, the 6 worst). Sets up as `bench model` does (its
synthetic returns, a cold then a warm update), runs R chained warm updates of one window as
gpu_backend/bench/chained_ess.py does, and prints one JSON line per instrument among the
WORST lowest: each parameter's bulk ESS over the joined draws, their posterior mean and sd,
and its chains' step sizes, acceptance, trajectory length and level-shift acceptance at
the last update. Parameter order: regime_model/params.py (K = 2: mu_0, mu_1, log sigma_0,
eta_1, u_0, u_1)."""

import json
import sys

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend import select_backend
from gpu_backend.bench.chained_ess import chained_runs, model_start
from regime_model.diagnostics import bulk_ess
from regime_model.update import ModelSpec
from service.commands.bench import SHAPES, _synthetic_returns


def main() -> None:
    shape = sys.argv[1] if len(sys.argv) > 1 else "trial"
    backend = select_backend(sys.argv[2] if len(sys.argv) > 2 else "numpy")
    updates = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    worst = int(sys.argv[4]) if len(sys.argv) > 4 else 6
    N = SHAPES[shape]
    spec, keys = ModelSpec(), np.arange(N)
    window, carries = model_start(_synthetic_returns(N), keys, spec, backend)
    ran = chained_runs(backend, window, carries, keys, 3, 7, spec, updates)
    draws, estimate, chained = ran.draws, ran.estimate, ran.carries
    ess = bulk_ess(draws)
    for i in np.argsort(ess.min(axis=1))[:worst]:
        pooled = draws[i].reshape(-1, draws.shape[-1])
        print(json.dumps({
            "instrument": int(i),
            "ess_bulk": np.round(ess[i], 1).tolist(),
            "mean": np.round(pooled.mean(axis=0), 3).tolist(),
            "sd": np.round(pooled.std(axis=0), 3).tolist(),
            "step_size": np.round(chained[i].step_size, 4).tolist(),
            "acceptance": round(float(estimate.acceptance[i]), 3),
            "trajectory_length": round(float(estimate.trajectory_length[i]), 3),
            "shift_acceptance": round(float(estimate.shift_acceptance[i]), 4),
        }), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
