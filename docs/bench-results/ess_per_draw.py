# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""What the short chains' ESS is worth against longer ones, for the figure compared with
NumPyro: `python docs/bench-results/ess_per_draw.py N BACKEND DRAWS...` runs a cold update
of N instruments (T = 256, K = 2, 4 chains, the daemon's ModelSpec) and 4 warm ones
chained as the daemon's; then, from the same carries and the same window, one warm update
of 4 chains x DRAWS for each DRAWS given, without run-on blocks (extend_max 0), so that
each instrument's parameter diagnostics come from the draws of one run. One JSON line per
DRAWS: the worst parameter's bulk ESS per draw (each instrument's, then the median and
the minimum over instruments), the same for the decision quantity P(turbulent) (the
gate's), and the update's wall time. Longer chains see more of the autocorrelation; an
ESS per draw that falls as the chains grow was overstated at the shorter length."""

import json
import sys
import time
from dataclasses import replace

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend import select_backend
from gpu_backend.identity import regime_returns
from regime_model import update
from regime_model.diagnostics import bulk_ess
from regime_model.update import ModelSpec, refresh


def main() -> None:
    n, backend = int(sys.argv[1]), select_backend(sys.argv[2])
    series = 0.01 * regime_returns(n, 262, np.random.default_rng(0))
    keys, spec = np.arange(n, dtype=np.uint32), ModelSpec()
    _, carries, _ = refresh(series[:, :256], [None] * n, keys, 1, 7, spec, backend)
    for seq in range(2, 6):
        _, carries, _ = refresh(series[:, seq - 1 : seq + 255], carries, keys, seq, 7, spec,
                                backend)  # fmt: skip
    window = series[:, 6:262]
    decision: list[np.ndarray] = []
    note = update.DeferredDiagnostics.note

    def noting(self: object, rows: object, result: object, draws: np.ndarray, s: object) -> None:
        decision.append(draws)
        note(self, rows, result, draws, s)  # type: ignore[arg-type]

    update.DeferredDiagnostics.note = noting  # type: ignore[method-assign,assignment]
    for draws in (int(x) for x in sys.argv[3:]):
        decision.clear()
        run_spec = replace(spec, draws=draws, extend_max=0)
        start = time.perf_counter()
        est, _, _ = refresh(window, carries, keys, 6, 7, run_spec, backend)
        wall = time.perf_counter() - start
        total = 4 * draws
        params = est.ess_bulk / total
        spread = np.concatenate([d[..., 0].reshape(len(d), -1).std(axis=1) for d in decision])
        gate = np.concatenate([bulk_ess(d)[:, 0] for d in decision])[spread > 1e-4] / total
        print(json.dumps({"instruments": n, "chains": 4, "draws": draws,
                          "backend": backend.name, "update_s": round(wall, 3),
                          "worst_parameter_ess_per_draw": {
                              "median": round(float(np.median(params)), 3),
                              "min": round(float(np.min(params)), 3)},
                          "p_turbulent_ess_per_draw": {
                              "median": round(float(np.median(gate)), 3),
                              "min": round(float(np.min(gate)), 3)}}), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
