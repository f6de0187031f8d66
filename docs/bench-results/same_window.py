"""How noisy is one warm update? The daemon's warm update run again and again on ONE fixed
window of a series (numpy float64), against a long cold reference on the same window.

    python docs/bench-results/same_window.py 2008-08-01 [--updates 80] [--long-draws 20000]
        [--long-warmup 1000] [--seed 7]

Prints, as JSON: the mean and the standard deviation over updates of the estimate the
strategy trades on (P(most volatile regime at the last bar)), the means of the first and
the second half, and with --long-draws the reference's value from 8 chains of that many
draws (`fit`, --long-warmup iterations of warm-up, --seed), its R-hat and each chain's own
mean of the same quantity (over 100 draws thinned evenly from the chain). At a fixed
window every update samples the same posterior, so the spread over updates is the Monte
Carlo error of a single update.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from gpu_backend.numpy_backend import NumpyBackend
from regime_model.fit import fit_series, regime_paths
from regime_model.sampler import SamplerConfig
from regime_model.scaling import robust_scale
from regime_model.types import Priors
from regime_model.update import InstrumentCarry, ModelSpec, refresh
from service.market.csv_prices import read_prices

WARM_UP_UPDATES = 5  # the first updates, still leaving the cold start, are not counted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("date", help="the window ends at the first bar of this date")
    parser.add_argument("--csv", type=Path, default=Path("tests/data/sp500.csv"))
    parser.add_argument("--column", default="Close")
    parser.add_argument("--updates", type=int, default=80)
    parser.add_argument("--long-draws", type=int, default=0)
    parser.add_argument("--long-warmup", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    dates, prices = read_prices(args.csv, args.column)
    returns = np.diff(np.log(np.asarray(prices)))
    spec = ModelSpec()
    end = next(k for k, d in enumerate(dates) if d.startswith(args.date))
    window = returns[end - spec.window : end]  # returns[end - 1] ends at bar `end`
    backend, carries = NumpyBackend(), [None]
    estimates = []
    for seq in range(1, args.updates + 1):
        carried: list[InstrumentCarry | None] = list(carries)
        estimate, carries, _ = refresh(window[None], carried, np.array([1]), seq, args.seed,
                                       spec, backend)  # fmt: skip
        if seq > WARM_UP_UPDATES:
            estimates.append(float(estimate.regime_probs[0, -1]))
    half = len(estimates) // 2
    out = {"date": dates[end], "updates": len(estimates),
           "mean": round(float(np.mean(estimates)), 4),
           "sd_over_updates": round(float(np.std(estimates)), 4),
           "halves": [round(float(np.mean(estimates[:half])), 4),
                      round(float(np.mean(estimates[half:])), 4)] if half else None}  # fmt: skip
    if args.long_draws:
        config = SamplerConfig(draws=args.long_draws, chains=8)
        result = fit_series(window, 2, args.seed, Priors(), config, args.long_warmup)
        y = window / float(robust_scale(window[None])[0])
        thin = max(1, args.long_draws // 100)
        per_chain = [regime_paths(chain[::thin], y, 2)[0][-1, -1]
                     for chain in result.theta]  # fmt: skip
        out["long_reference"] = {"draws": args.long_draws, "chains": 8,
                                 "warmup": args.long_warmup, "seed": args.seed,
                                 "p_turbulent": round(float(result.filtered[-1, -1]), 4),
                                 "rhat": round(float(result.rhat.max()), 4),
                                 "per_chain": [round(float(p), 3) for p in per_chain]}  # fmt: skip
    print(json.dumps(out))


if __name__ == "__main__":
    main()
