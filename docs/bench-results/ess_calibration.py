# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Whether the gate's Monte Carlo error holds, with the ESS capped at the draw count (the
daemon's) and with Stan's cap (log10 of the draws times the draws):
`python docs/bench-results/ess_calibration.py N REPEATS DRAWS SERIES...` runs, for each
SERIES (the seed of N synthetic return series, T = 256, K = 2, wgpu) and each cap, a cold
update and then REPEATS warm updates of the next window with 4 chains x DRAWS, each from
the carries the last one left (as the daemon's updates are), run-on blocks and all. A
reference of 32 chains x 1,000 draws gives each instrument's posterior mean of
P(turbulent). Per series and cap one JSON line: over instruments and repeats,
z = (estimate - reference) / reported MCSE; `rms_z`, and `scale` = median |z| / 0.6745
(1 when the reported error is the real one; the RMS also carries the noise of each
update's own error estimate and heavy tails); the instrument blocks that ran on; the
median decision-quantity ESS per draw of the first run. Estimates whose every draw pins
P(turbulent) at 0 or 1 (MCSE below 1e-4) are left out."""

import json
import sys
from dataclasses import replace
from typing import Any

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend import select_backend
from gpu_backend.identity import regime_returns
from regime_model import diagnostics, update
from regime_model.update import ModelSpec, refresh

CAPS = {"draws": 1.0, "stan": None}  # diagnostics.ESS_MOST_PER_DRAW


def calibrate(n: int, repeats: int, draws: int, series_seed: int, backend: Any) -> None:
    series = 0.01 * regime_returns(n, 258, np.random.default_rng(series_seed))
    keys, window = np.arange(n, dtype=np.uint32), series[:, 1:257]

    def start(spec: ModelSpec) -> list:
        return list(refresh(series[:, :256], [None] * n, keys, 1, 7, spec, backend)[1])

    ref_spec = replace(ModelSpec(), chains=32, draws=1000, extend_max=0)
    p_ref = refresh(window, start(ref_spec), keys, 2, 7, ref_spec, backend)[0].regime_probs[:, -1]
    first_ess: list[float] = []
    note = update.DeferredDiagnostics.note

    def noting(self: Any, rows: Any, result: Any, decision: Any, s: ModelSpec) -> None:
        if s.chains == 4:  # the first run's narrow instruments
            spread = decision[..., 0].reshape(len(rows), -1).std(axis=1)
            ess = diagnostics.bulk_ess(decision)[:, 0][spread > 1e-4]
            first_ess.extend(ess / (s.chains * s.draws))
        note(self, rows, result, decision, s)

    update.DeferredDiagnostics.note = noting  # type: ignore[method-assign]
    spec = replace(ModelSpec(), draws=draws)
    for name, most in CAPS.items():
        diagnostics.ESS_MOST_PER_DRAW = most
        first_ess.clear()
        carries, z, ran_on = start(spec), [], 0
        for r in range(repeats):
            est, after, info = refresh(window, carries, keys, 2 + r, 7, spec, backend)
            carries = list(after)
            live = est.p_turbulent_mcse > 1e-4  # not pinned at 0 or 1 by every draw
            z.extend((est.regime_probs[live, -1] - p_ref[live]) / est.p_turbulent_mcse[live])
            ran_on += info.extended
        print(json.dumps({"series": series_seed, "cap": name, "instruments": n,
                          "repeats": repeats, "draws": draws,
                          "rms_z": round(float(np.sqrt(np.mean(np.square(z)))), 3),
                          "scale": round(float(np.median(np.abs(z)) / 0.6745), 3),
                          "counted": len(z), "instrument_blocks_run_on": ran_on,
                          "median_first_ess_per_draw": round(float(np.median(first_ess)), 2),
                          "backend": backend.name}), flush=True)  # fmt: skip
    update.DeferredDiagnostics.note = note  # type: ignore[method-assign]
    diagnostics.ESS_MOST_PER_DRAW = CAPS["draws"]


def main() -> None:
    n, repeats, draws = (int(x) for x in sys.argv[1:4])
    backend = select_backend("wgpu")
    for seed in sys.argv[4:]:
        calibrate(n, repeats, draws, int(seed), backend)


if __name__ == "__main__":
    main()
