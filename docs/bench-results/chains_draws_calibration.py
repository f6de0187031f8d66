# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Whether the Monte Carlo errors a warm update reports hold with fewer draws per chain:
`python docs/bench-results/chains_draws_calibration.py N REPEATS BACKEND CHAINS:DRAWS...`
runs, for each setting, a cold update of N instruments (T = 256, K = 2) and then REPEATS
warm updates of the next window, each with other random numbers (its update number) and,
with CHAIN=1 in the environment, each from the carries the last one left (as the daemon's
updates are; otherwise all from the cold update's). A reference run of 32 chains x 1,000
draws gives each instrument's posterior mean of P(turbulent). Per setting it prints the
RMS over instruments and repeats of z = (estimate - reference) / reported MCSE: about 1
when the reported error (from the bulk ESS) is honest, above 1 when the ESS is overstated.
Instruments that run on (their estimate then comes from a run-on block) count as well;
the count of those is printed. Estimates whose every draw pins P(turbulent) at 0 or 1
(MCSE below 1e-4) are left out."""

import json
import os
import sys
from dataclasses import replace

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend import select_backend
from gpu_backend.identity import regime_returns
from regime_model.update import ModelSpec, refresh


def main() -> None:
    n, repeats, backend = int(sys.argv[1]), int(sys.argv[2]), select_backend(sys.argv[3])
    chained = os.environ.get("CHAIN") == "1"
    series = 0.01 * regime_returns(n, 258, np.random.default_rng(0))
    keys = np.arange(n, dtype=np.uint32)
    window = series[:, 1:257]

    def start(spec: ModelSpec) -> list:
        return list(refresh(series[:, :256], [None] * n, keys, 1, 7, spec, backend)[1])

    ref_spec = replace(ModelSpec(), chains=32, draws=1000, extend_max=0)
    ref, _, _ = refresh(window, start(ref_spec), keys, 2, 7, ref_spec, backend)
    p_ref = ref.regime_probs[:, -1]
    for setting in sys.argv[4:]:
        chains, draws = (int(x) for x in setting.split(":"))
        spec = replace(ModelSpec(), chains=chains, draws=draws)
        carries, z, ran_on, ess = start(spec), [], 0, []
        for r in range(repeats):
            est, after, info = refresh(window, carries, keys, 2 + r, 7, spec, backend)
            carries = list(after) if chained else carries
            live = est.p_turbulent_mcse > 1e-4  # not pinned at 0 or 1 by every draw
            z.extend((est.regime_probs[live, -1] - p_ref[live]) / est.p_turbulent_mcse[live])
            ran_on += info.extended
            ess.append(float(np.median(est.ess_bulk)))
        print(json.dumps({"instruments": n, "repeats": repeats, "chains": chains,
                          "draws": draws, "rms_z": round(float(np.sqrt(np.mean(np.square(z)))), 3),
                          "max_abs_z": round(float(np.max(np.abs(z))), 2), "counted": len(z),
                          "instrument_blocks_run_on": ran_on,
                          "median_ess_bulk": round(float(np.median(ess)), 1), "chained": chained,
                          "backend": backend.name}), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
