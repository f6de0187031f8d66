# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""What the default's understated MCSE is not made of:
`python docs/bench-results/mcse_checks.py CHECK [N [REPEATS]]` (defaults 16 and 8; wgpu) on
the set-up of chains_draws_calibration.py with each warm update starting from the last
one's carries (as CHAIN=1 there), 4 chains x 40 draws. CHECK:
- `raw-ess`: the RMS of z with the gate's MCSE from the bulk ESS (as the daemon) and from
  the ESS of the raw draws (split chains, no ranks; `estimate.bulk_ess` swapped for the run);
- `warmup`: the RMS of z with 15 (the default), 40 and 80 re-adaptation iterations;
- `no-run-on`: the RMS of z with the daemon's run-on blocks (extend_max 2) and without;
- `reference`: two references of 32 x 1,000 draws from other starts and random numbers,
  their difference in units of one 4 x 40 update's MCSE and of their own MCSE (RMS).
One JSON line per variant."""

import json
import sys
from dataclasses import replace
from typing import Any

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend import select_backend
from gpu_backend.identity import regime_returns
from regime_model import estimate
from regime_model.diagnostics import _ess, _split
from regime_model.update import ModelSpec, refresh

REFERENCE = replace(ModelSpec(), chains=32, draws=1000, extend_max=0)


def raw_ess(draws: Any) -> Any:
    """The ESS of the raw draws [N, C, S, Q] per quantity: split chains, no ranks."""
    return _ess(_split(np.moveaxis(draws, -1, 1)))


class Setup:
    def __init__(self, n: int, series_seed: int = 0) -> None:
        self.n, self.backend = n, select_backend("wgpu")
        self.series = 0.01 * regime_returns(n, 258, np.random.default_rng(series_seed))
        self.keys, self.window = np.arange(n, dtype=np.uint32), self.series[:, 1:257]

    def start(self, spec: ModelSpec, seq: int = 1) -> list:
        cold = refresh(self.series[:, :256], [None] * self.n, self.keys, seq, 7, spec,
                       self.backend)  # fmt: skip
        return list(cold[1])

    def reference(self, seq: int = 1) -> Any:
        return refresh(self.window, self.start(REFERENCE, seq), self.keys, seq + 1, 7,
                       REFERENCE, self.backend)[0]  # fmt: skip

    def rms_z(self, spec: ModelSpec, p_ref: Any, repeats: int) -> dict[str, float]:
        """REPEATS warm updates chained from a cold start: z = (estimate - reference) /
        reported MCSE, its RMS, largest and `scale` (median |z| / 0.6745: 1 when honest)."""
        carries, z, ran_on = self.start(spec), [], 0
        for r in range(repeats):
            est, after, info = refresh(self.window, carries, self.keys, 2 + r, 7, spec,
                                       self.backend)  # fmt: skip
            carries = list(after)
            live = est.p_turbulent_mcse > 1e-4  # not pinned at 0 or 1 by every draw
            z.extend((est.regime_probs[live, -1] - p_ref[live]) / est.p_turbulent_mcse[live])
            ran_on += info.extended
        return {"rms_z": round(float(np.sqrt(np.mean(np.square(z)))), 3),
                "scale": round(float(np.median(np.abs(z)) / 0.6745), 3),
                "max_abs_z": round(float(np.max(np.abs(z))), 2), "counted": len(z),
                "instrument_blocks_run_on": ran_on}  # fmt: skip


def main() -> None:
    check = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    setup, spec = Setup(n), ModelSpec()
    ref = setup.reference()
    p_ref = ref.regime_probs[:, -1]
    if check == "raw-ess":
        for name, ess in (("bulk", estimate.bulk_ess), ("raw", raw_ess)):
            estimate.bulk_ess = ess
            print(json.dumps({"check": check, "ess": name, **setup.rms_z(spec, p_ref, repeats)}))
    elif check == "warmup":
        for warmup in (15, 40, 80):
            z = setup.rms_z(replace(spec, warmup_warm=warmup), p_ref, repeats)
            print(json.dumps({"check": check, "warmup_warm": warmup, **z}))
    elif check == "no-run-on":
        for extend_max in (2, 0):
            z = setup.rms_z(replace(spec, extend_max=extend_max), p_ref, repeats)
            print(json.dumps({"check": check, "extend_max": extend_max, **z}))
    elif check == "reference":
        other = setup.reference(101)
        est, _, _ = refresh(setup.window, setup.start(spec), setup.keys, 2, 7, spec,
                            setup.backend)  # fmt: skip
        d = p_ref - other.regime_probs[:, -1]
        live = est.p_turbulent_mcse > 1e-4
        own = np.hypot(ref.p_turbulent_mcse, other.p_turbulent_mcse).clip(1e-9)
        print(json.dumps({
            "check": check,
            "rms_in_update_mcse": round(float(np.sqrt(np.mean(
                (d[live] / est.p_turbulent_mcse[live]) ** 2))), 3),
            "rms_in_own_mcse": round(float(np.sqrt(np.mean((d / own) ** 2))), 3),
            "reference_median_ess": round(float(np.median(ref.ess_bulk)), 1)}))  # fmt: skip
    else:
        raise SystemExit("mcse_checks.py: CHECK is raw-ess, warmup, no-run-on or reference, "
                         f"not {check!r}")


if __name__ == "__main__":
    main()
