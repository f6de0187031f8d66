"""An experiment (issue 15, item 1): do importance weights on the carried chains remove
the warm update's error at the 2008 regime change?

    python docs/bench-results/smc_reweighting.py CHAINS plain|smc [ESS_FRACTION]

S&P 500 closes (tests/data/sp500.csv), 2008-08-01 to 2008-10-31, window 256, seed 7: a
cold update at the bar before, then the daemon's warm update at every bar (its ModelSpec,
CHAINS chains, no extension blocks). `smc`: before each warm update, every chain's weight
is multiplied by p(window_new | theta_c) / p(window_old | theta_c) at its last state (the
prior cancels); the estimate is the weighted mean of the chains' mean P(turbulent), and the
chains are resampled (systematic) when the weights' ESS falls below ESS_FRACTION x CHAINS
(default 0.5). The warm update's kernel leaves the new posterior invariant, so weighted
chains stay properly weighted after it. Errors are against the references of
regime-change-sp500-h200-2026-12-01.json (8 chains x 4,000 draws per bar). One JSON line.
It reads the summary's per-draw decision quantities through a private helper: an
experiment, not a product path.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from gpu_backend.numpy_backend import NumpyBackend
from regime_model.estimate import _summarise, estimate_of
from regime_model.scaling import robust_scale
from regime_model.spec import ModelSpec
from regime_model.update import InstrumentCarry, build_batch
from service.bench.series_replay import KEY, bars
from service.bench.validate_data import closes as sp500_closes
from service.model_state import InstrumentState

REFERENCES = Path("docs/bench-results/regime-change-sp500-h200-2026-12-01.json")
SEED = 7
BACKEND = NumpyBackend()


def update(spec: ModelSpec, returns: np.ndarray, carry: InstrumentCarry | None, seq: int
           ) -> tuple[float, InstrumentCarry, np.ndarray]:
    """One refresh of the single series: (the plain estimate, the new carry, each chain's
    mean P(turbulent))."""
    batch, scale = build_batch(returns[None], [carry], KEY, seq, SEED, spec)
    result = BACKEND.run_update(batch)
    estimate, carries, _ = estimate_of(result, batch.y, scale, spec, BACKEND)
    summary = _summarise(result, batch.y, scale, spec, BACKEND)
    per_chain = summary.decision_draws[0, :, :, 0].mean(axis=1)
    return float(estimate.regime_probs[0, -1]), carries[0], per_chain


def log_likelihood(spec: ModelSpec, theta: np.ndarray, returns: np.ndarray) -> np.ndarray:
    """log p(window | theta) + log prior, per chain, on the window's own scaled returns."""
    y = returns / robust_scale(returns[None])[0]
    value, _ = BACKEND.hmm_value_and_grad(theta, np.repeat(y[None], len(theta), axis=0),
                                          spec.n_states, spec.priors)
    return value


def resampled(carry: InstrumentCarry, weights: np.ndarray, rng: np.random.Generator
              ) -> InstrumentCarry:
    n = len(weights)
    points = (rng.random() + np.arange(n)) / n
    idx = np.minimum(np.searchsorted(np.cumsum(weights), points), n - 1)
    return InstrumentCarry(carry.position[idx].copy(), carry.step_size[idx].copy(),
                           carry.inv_mass)


def autumn_2008(spec: ModelSpec) -> tuple[list[str], np.ndarray, int, int, InstrumentState]:
    """S&P 500 (dates, closes), the index of the bar before 2008-08-01 and of 2008-10-31,
    and the window as it stands at the bar before."""
    dates, closes = sp500_closes()
    first, last = dates.index("2008-08-01") - 1, dates.index("2008-10-31")
    state = InstrumentState("SERIES")
    state.append(bars(dates, closes, first - spec.window, first + 1), spec.window)
    return dates, closes, first, last, state


def main(chains: int, mode: str, ess_fraction: float) -> dict[str, object]:
    references = {b["time"]: b["reference"] for b in json.loads(REFERENCES.read_text())["bars"]}
    spec = ModelSpec(chains=chains, extend_max=0)
    dates, closes, first, last, state = autumn_2008(spec)
    started = time.time()
    _, carry, _ = update(spec, state.returns, None, 1)
    log_w, rng = np.zeros(chains), np.random.default_rng(1)
    errors, resamples, smallest_ess = [], 0, float(chains)
    for i in range(first + 1, last + 1):
        old = state.returns.copy()
        state.append(bars(dates, closes, i, i + 1), spec.window)
        weights = np.full(chains, 1.0 / chains)
        if mode == "smc":
            log_w += (log_likelihood(spec, carry.position, state.returns)
                      - log_likelihood(spec, carry.position, old))
            weights = np.exp(log_w - log_w.max())
            weights /= weights.sum()
            ess = 1.0 / float((weights**2).sum())
            smallest_ess = min(smallest_ess, ess)
            if ess < ess_fraction * chains:
                carry = resampled(carry, weights, rng)
                log_w, weights, resamples = np.zeros(chains), np.full(chains, 1 / chains), \
                    resamples + 1
        plain, carry, per_chain = update(spec, state.returns, carry, i - first + 1)
        estimate = float(weights @ per_chain) if mode == "smc" else plain
        if dates[i][:10] in references:
            errors.append(abs(estimate - references[dates[i][:10]]))
    e = np.array(errors)
    return {"chains": chains, "mode": mode, "bars": len(e),
            "median": round(float(np.median(e)), 4),
            "p90": round(float(np.percentile(e, 90)), 4), "max": round(float(e.max()), 4),
            "resamples": resamples, "smallest_weight_ess": round(smallest_ess, 2),
            "seconds": round(time.time() - started, 1)}


if __name__ == "__main__":
    fraction = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
    print(json.dumps(main(int(sys.argv[1]), sys.argv[2], fraction)))
