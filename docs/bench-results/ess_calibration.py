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
P(turbulent) at 0 or 1 (MCSE below 1e-4) are left out. The updates and the reference are
mcse_checks.py's (`Setup`)."""

import json
import sys
from dataclasses import replace
from typing import Any

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from mcse_checks import Setup  # beside this script: the same chained updates and reference
from regime_model import diagnostics, update
from regime_model.update import ModelSpec

CAPS = {"draws": 1.0, "stan": None}  # diagnostics.ESS_MOST_PER_DRAW


def calibrate(n: int, repeats: int, draws: int, series_seed: int) -> None:
    setup = Setup(n, series_seed)
    p_ref = setup.reference().regime_probs[:, -1]
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
        z = setup.rms_z(spec, p_ref, repeats)
        print(json.dumps({"series": series_seed, "cap": name, "instruments": n,
                          "repeats": repeats, "draws": draws, **z,
                          "median_first_ess_per_draw": round(float(np.median(first_ess)), 2),
                          "backend": setup.backend.name}), flush=True)  # fmt: skip
    update.DeferredDiagnostics.note = note  # type: ignore[method-assign]
    diagnostics.ESS_MOST_PER_DRAW = CAPS["draws"]


def main() -> None:
    n, repeats, draws = (int(x) for x in sys.argv[1:4])
    for seed in sys.argv[4:]:
        calibrate(n, repeats, draws, int(seed))


if __name__ == "__main__":
    main()
