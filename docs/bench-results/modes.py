"""What the 2008 window's posterior looks like (issue 15, item 1): one long cold run on
one S&P 500 window, and how P(turbulent at the last bar) sits over the draws.

    python docs/bench-results/modes.py DATE    # e.g. 2008-08-13; about 30 s on dev-2c

8 chains x (600 warm-up + 3,000 draws), the daemon's model, numpy float64, seed 7. Prints
each chain's mean P(turbulent), a histogram of the per-draw values, each parameter's
mean over the draws below and above 0.5 (sigma in units of the window's robust scale),
and each chain's integrated autocorrelation time of P(turbulent) in iterations.
"""

from __future__ import annotations

import csv
import sys

import numpy as np

from gpu_backend.numpy_backend import NumpyBackend
from regime_model.estimate import _summarise
from regime_model.params import constrain
from regime_model.spec import ModelSpec
from regime_model.update import build_batch
from service.bench.series_replay import KEY, bars
from service.model_state import InstrumentState


def autocorrelation_time(x: np.ndarray) -> float:
    """1 + 2 sum of the autocorrelations up to the first below 0.05."""
    x = x - x.mean()
    n = len(x)
    f = np.fft.rfft(x, 2 * n)
    ac = np.fft.irfft(f * np.conj(f))[:n]
    ac /= ac[0]
    below = np.flatnonzero(ac < 0.05)
    stop = int(below[0]) if len(below) else n
    return float(1.0 + 2.0 * ac[1:stop].sum())


def main(date: str) -> None:
    with open("tests/data/sp500.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    dates = [r["Date"] for r in rows]
    closes = np.array([float(r["Close"]) for r in rows])
    i = dates.index(date)
    spec = ModelSpec(chains=8, draws=3000, warmup_cold=600, extend_max=0)
    state = InstrumentState("SERIES")
    state.append(bars(dates, closes, i - spec.window, i + 1), spec.window)
    batch, scale = build_batch(state.returns[None], [None], KEY, 1, 7, spec)
    backend = NumpyBackend()
    result = backend.run_update(batch)
    p = _summarise(result, batch.y, scale, spec, backend).decision_draws[0, :, :, 0]
    print("P(turbulent): mean", round(float(p.mean()), 3),
          "per chain", np.round(p.mean(axis=1), 3).tolist())
    print("histogram over [0, 1] in tenths:", np.histogram(p, bins=10, range=(0, 1))[0].tolist())
    theta = result.draws.reshape(-1, result.draws.shape[-1])
    c = constrain(theta, spec.n_states)
    sigma, P = np.exp(c.log_sigma), np.exp(c.log_trans)
    flat = p.ravel()
    low, high = flat < 0.5, flat >= 0.5
    for name, v in {"mu_calm": c.mu[:, 0], "mu_turbulent": c.mu[:, 1],
                    "sigma_calm": sigma[:, 0], "sigma_turbulent": sigma[:, 1],
                    "p_stay_calm": P[:, 0, 0], "p_stay_turbulent": P[:, 1, 1]}.items():
        print(f"{name}: below 0.5 {v[low].mean():.3f}, above {v[high].mean():.3f}")
    print("autocorrelation time per chain:",
          [round(autocorrelation_time(chain), 1) for chain in p])


if __name__ == "__main__":
    main(sys.argv[1])
