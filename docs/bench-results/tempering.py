"""An experiment (issue 15, item 1): does parallel tempering within each warm update
move the chains between the two interpretations of the 2008 window fast enough?

    python docs/bench-results/tempering.py CHAINS TEMPERATURES [BETA_MIN] [ITERATIONS]

The 2008 windows are bimodal (docs/benchmarks.md, "What the error is made of"): one mode
calls the recent bars turbulent, the other keeps them calm and saves "turbulent" for the
extremes; a chain stays in a mode for 40-210 iterations, so 4 chains x 55 iterations per
bar estimate the modes' weights in steps of about 1/4. Here every instrument has CHAINS
chains at each of TEMPERATURES inverse temperatures, geometric from 1 down to BETA_MIN
(density prior x likelihood^beta); after every HMC iteration neighbouring temperatures
swap states (even pairs, then odd), accepted with min(1, exp((b_i - b_j)(l_j - l_i))).
Only the beta = 1 chains' draws make the estimate. Per bar: ITERATIONS (default 55, the
daemon's 15 + 40), the first 15 re-adapt each lane's step size (target acceptance 0.8),
3-6 leapfrog steps each; the inverse metric is the cold start's, for every temperature.

S&P 500 closes, 2008-08-01 to 2008-10-31, window 256, seed 7: a cold update (the
daemon's) at the bar before, then one tempered update per bar. Errors against the strong
references (16 chains x 10,000 draws per bar) of the three regime-change-sp500-*-refs16x10000
JSON files. One JSON line. numpy float64; an experiment, not a product path.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
from smc_reweighting import autumn_2008  # this folder is on sys.path when run as a script

from gpu_backend.numpy_backend import NumpyBackend
from regime_model import hmc, rng
from regime_model.params import log_prior
from regime_model.spec import ModelSpec
from regime_model.update import build_batch, refresh
from service.bench.series_replay import KEY, bars

RESULTS = Path("docs/bench-results")
REFERENCES = [RESULTS / f"regime-change-sp500-{m}-refs16x10000-h200-2026-12-02.json"
              for m in ("aug", "sep", "oct")]
SEED = 7
BACKEND = NumpyBackend()
ADAPT = 15


def tempered(y: np.ndarray, beta: np.ndarray, spec: ModelSpec):
    """log prior + beta x log likelihood per lane, and its gradient; and the likelihood."""
    def fn(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        post, g_post = BACKEND.hmm_value_and_grad(theta, y, spec.n_states, spec.priors)
        prior, g_prior = log_prior(theta, spec.n_states, spec.priors)
        return prior + beta * (post - prior), g_prior + beta[:, None] * (g_post - g_prior)

    def loglik(theta: np.ndarray) -> np.ndarray:
        post, _ = BACKEND.hmm_value_and_grad(theta, y, spec.n_states, spec.priors)
        return post - log_prior(theta, spec.n_states, spec.priors)[0]

    return fn, loglik


def tempered_update(y1: np.ndarray, position: np.ndarray, log_eps: np.ndarray,
                    inv_mass: np.ndarray, betas: np.ndarray, chains: int, seq: int,
                    iterations: int, spec: ModelSpec, gen: np.random.Generator):
    """One update: lanes temperature-major ([M * C]); returns the beta = 1 draws' mean
    P(turbulent), the new positions and step sizes, and the swap acceptance."""
    M = len(betas)
    beta = np.repeat(betas, chains)
    y = np.repeat(y1[None], M * chains, axis=0)
    fn, loglik = tempered(y, beta, spec)
    stream = rng.make_stream(SEED, np.full(M * chains, 1, np.uint32),
                             np.arange(M * chains, dtype=np.uint32), seq)
    state = hmc.init(position, fn)
    draws, swaps, tried = [], 0, 0
    for it in range(iterations):
        steps = gen.integers(spec.steps_min, spec.steps_max + 1)
        state, info = hmc.step(hmc.Key(stream, it), state, hmc.HMCParams(np.exp(log_eps), inv_mass),
                               fn, steps)
        if it < ADAPT:
            log_eps += 0.3 * (info.acceptance_rate - spec.target_accept)
        if M > 1:  # swap neighbouring temperatures, chain c with chain c
            ll = loglik(state.position).reshape(M, chains)
            pos = state.position.reshape(M, chains, -1).copy()
            for lo in range(it % 2, M - 1, 2):
                a = (betas[lo] - betas[lo + 1]) * (ll[lo + 1] - ll[lo])
                ok = np.log(gen.random(chains)) < a
                swaps, tried = swaps + int(ok.sum()), tried + chains
                pos[lo, ok], pos[lo + 1, ok] = pos[lo + 1, ok], pos[lo, ok].copy()
                ll[lo, ok], ll[lo + 1, ok] = ll[lo + 1, ok], ll[lo, ok].copy()
            state = hmc.init(pos.reshape(M * chains, -1), fn)
        if it >= ADAPT:
            draws.append(state.position[:chains].copy())
    theta = np.concatenate(draws)
    p = BACKEND.hmm_predictive(theta, np.repeat(y1[None], len(theta), 0), spec.n_states)
    return float(p.filtered_last[:, -1].mean()), state.position, log_eps, swaps / max(tried, 1)


def main(chains: int, temperatures: int, beta_min: float, iterations: int) -> dict[str, object]:
    references = {b["time"]: b["reference"] for f in REFERENCES
                  for b in json.loads(f.read_text())["bars"]}
    spec = ModelSpec(chains=chains, extend_max=0)
    dates, closes, first, last, state = autumn_2008(spec)
    started = time.time()
    _, [carry], _ = refresh(state.returns[None], [None], KEY, 1, SEED, spec, BACKEND)
    betas = beta_min ** (np.arange(temperatures) / max(temperatures - 1, 1))
    position = np.tile(carry.position, (temperatures, 1))
    log_eps = np.log(np.tile(carry.step_size, temperatures))
    inv_mass = np.tile(carry.inv_mass, (temperatures * chains, 1))
    gen = np.random.default_rng(SEED)
    errors, signed, swap_rates = [], [], []
    for i in range(first + 1, last + 1):
        state.append(bars(dates, closes, i, i + 1), spec.window)
        batch, _ = build_batch(state.returns[None], [None], KEY, i, SEED, spec)
        estimate, position, log_eps, swap_rate = tempered_update(
            batch.y[0], position, log_eps, inv_mass, betas, chains, i, iterations, spec, gen)
        swap_rates.append(swap_rate)
        ref = references.get(dates[i][:10])
        if ref is not None:
            errors.append(abs(estimate - ref))
            signed.append(estimate - ref)
    e = np.array(errors)
    return {"chains": chains, "temperatures": temperatures, "beta_min": beta_min,
            "betas": [round(float(b), 4) for b in betas], "iterations": iterations,
            "bars": len(e), "median": round(float(np.median(e)), 4),
            "p90": round(float(np.percentile(e, 90)), 4), "max": round(float(e.max()), 4),
            "above_reference": int((np.array(signed) > 0).sum()),
            "swap_acceptance": round(float(np.mean(swap_rates)), 3),
            "seconds": round(time.time() - started, 1)}


if __name__ == "__main__":
    args = sys.argv[1:]
    print(json.dumps(main(int(args[0]), int(args[1]),
                          float(args[2]) if len(args) > 2 else 0.2,
                          int(args[3]) if len(args) > 3 else 55)))
