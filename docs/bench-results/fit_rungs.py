"""One sampler of `fit`'s ladder, forced, on S&P 500 closes (or a window), over seeds.

    python docs/bench-results/fit_rungs.py SAMPLER DRAWS SEEDS [FROM TO]
    e.g. fit_rungs.py split-1 500 20261130 1999-01-01 2007-12-31
         fit_rungs.py split-2 500 1,2,3 2007-09-25 2008-09-29
         fit_rungs.py split-1 400 1-24

The figures of docs/fit.md that come from runs the ladder would not report (a sampler
that misses the rule is discarded there): per seed, the worst R-hat, the smallest bulk
and tail ESS, the acceptance per chain and whether the run meets the rule. One JSON
line per seed. SAMPLER is one of regime_model.fit.LADDER; the warm-up is the sampler's
default.
"""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path

import numpy as np

from regime_model import fit
from regime_model.sampler import SamplerConfig
from regime_model.types import Priors
from service.market.csv_prices import read_prices

CSV = Path(__file__).resolve().parents[2] / "tests" / "data" / "sp500.csv"


def seeds(text: str) -> list[int]:
    if "-" in text:
        low, high = (int(x) for x in text.split("-"))
        return list(range(low, high + 1))
    return [int(x) for x in text.split(",")]


def main() -> None:
    sampler, draws, which = sys.argv[1], int(sys.argv[2]), seeds(sys.argv[3])
    bounds = [date.fromisoformat(d) for d in sys.argv[4:6]] or [None, None]
    _, closes = read_prices(CSV, "Close", *bounds)
    returns = np.diff(np.log(np.asarray(closes)))
    for seed in which:
        result = fit.fit_series(returns, 2, seed, Priors(), SamplerConfig(draws, 4),
                                samplers=(sampler,))  # fmt: skip
        print(json.dumps({
            "sampler": sampler, "returns": len(returns), "draws": draws, "seed": seed,
            "worst_rhat": round(float(result.rhat.max()), 4),
            "min_ess_bulk": round(float(result.ess_bulk.min())),
            "min_ess_tail": round(float(result.ess_tail.min())),
            "acceptance": [round(float(a), 3) for a in result.sampler.acceptance],
            "meets_rule": fit.meets_rule(result),
        }), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
