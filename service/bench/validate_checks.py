"""The validation suite's checks: each runs the real code path and judges it by a rule.

Every check returns a Check: its rule in words, pass or fail, and the figures behind the
verdict (docs/validation.md is written from them). The functions they run are looked up
at call time (`posterior.log_density_and_grad`, `fit.fit_series`, ...), so a planted
fault (service/bench/mutants.py) is what they run.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np

from regime_model import fit, posterior
from regime_model.params import n_params
from regime_model.sampler import SamplerConfig
from regime_model.spec import ModelSpec
from regime_model.types import Priors
from regime_model.validation import sbc
from regime_model.validation.posteriordb import check as pdb
from service.bench import validate_data as data
from service.bench.series_replay import replay

# The S&P 500 window whose long-run posterior is the reference (the 256 returns to the
# Lehman-week close), and the dates the worker path is judged on: the bar of 2007-02-27
# (-3.5 % after months of calm) turns the regime from calm (P 0.02) to turbulent (P 1.0).
SP500_END, WORKER_DATES = "2008-09-29", ("2007-02-26", "2007-02-27")
WARM_UPDATES = 5  # worker path: one cold update, then this many warm ones, one per bar
SBC_SIZES = {  # datasets, T, warm-up, draws per chain, thin, bins
    "quick": (40, 100, 200, 100, 4, 5),
    "full": (200, 128, 300, 200, 8, 10),
}
POSTERIORDB_STEPS = {
    "hmm_example-hmm_example": (3, 7),
    "garch-garch11": (3, 7),
    "arma-arma11": (3, 7),
    "arK-arK": (8, 16),
    "bball_drive_event_1-hmm_drive_1": (3, 7),
}
MAX_CHAIN_CORRELATION = 0.5  # median over parameters of the largest |corr| between chains
ACCEPTANCE_BAND = (0.75, 0.85)  # the target 0.8 +- 0.05 (warm updates)
P_TURBULENT_TOL = 0.1  # the daemon's 160 draws against a long run's P(turbulent)


class Check(NamedTuple):
    name: str
    rule: str
    passed: bool
    figures: dict[str, Any]
    seconds: float


def _timed(name: str, rule: str, run: Any) -> Check:
    t0 = time.perf_counter()
    passed, figures = run()
    return Check(name, rule, bool(passed), figures, round(time.perf_counter() - t0, 2))


def gradient(seed: int) -> Check:
    def run() -> tuple[bool, dict[str, Any]]:
        worst = {}
        for K in (2, 3):
            sim = sbc.simulate(8, K, 64, Priors(), seed)
            grad = posterior.log_density_and_grad(sim.theta, sim.y, K, Priors())[1]
            fd = np.empty_like(grad)
            for d in range(n_params(K)):
                fd[:, d] = _central_difference(sim.theta, d, sim.y, K)
            worst[f"K{K}"] = float((np.abs(grad - fd) / np.maximum(np.abs(fd), 1.0)).max())
        return max(worst.values()) < 1e-6, {"max_relative_error": worst}

    rule = "gradient against central differences at 8 prior draws, K = 2 and 3: < 1e-6"
    return _timed("gradient", rule, run)


def _central_difference(theta: np.ndarray, d: int, y: np.ndarray, K: int) -> np.ndarray:
    """d log p / d theta_d by the fourth-order five-point stencil (h = 1e-4: truncation
    ~1e-16, rounding ~1e-12 of the density's size)."""
    h = 1e-4
    step = np.zeros(theta.shape[1])
    step[d] = h

    def at(k: int) -> np.ndarray:
        value: np.ndarray = posterior.log_density_and_grad(theta + k * step, y, K, Priors())[0]
        return value

    out: np.ndarray = (-at(2) + 8 * at(1) - 8 * at(-1) + at(-2)) / (12 * h)
    return out


def calibration(K: int, size: str, seed: int) -> Check:
    n, T, warmup, draws, thin, bins = SBC_SIZES[size]
    shift = ModelSpec().shift_moves  # the daemon's sampler: its level-shift move or not

    def run() -> tuple[bool, dict[str, Any]]:
        config = SamplerConfig(draws=draws, chains=4, shift_moves=shift)
        c = sbc.calibrate(n, K, T, Priors(), config, warmup, seed, thin, bins)
        level = 0.01 / n_params(K)
        figures = {
            "datasets": n, "T": T, "warmup": warmup, "draws": draws, "bins": bins,
            "shift_moves": config.shift_moves,
            "chi2": [round(float(x), 2) for x in c.chi2],
            "p_value": [round(float(x), 4) for x in c.p_value],
            "min_p": round(float(c.p_value.min()), 5), "level": round(level, 5),
            "divergences": c.divergences,
        }  # fmt: skip
        return bool((c.p_value > level).all()) and c.divergences <= n, figures

    sampler = "HMC with level-shift moves" if shift else "HMC"
    rule = (f"SBC ranks uniform ({sampler}): every parameter's chi-square "
            "p > 0.01 / D; divergences <= datasets")
    return _timed(f"sbc_k{K}", rule, run)


def posteriordb(seed: int) -> Check:
    def run() -> tuple[bool, dict[str, Any]]:
        rows = {}
        for name, (lo, hi) in POSTERIORDB_STEPS.items():
            config = SamplerConfig(draws=1000, chains=4, steps_min=lo, steps_max=hi)
            target = data.target(name)
            result = pdb.run(target, config, 1000, seed)
            checks = pdb.compare(target, result, data.reference(name))
            rows[name] = _posterior_row(checks, int(result.divergences.sum()))
            rows[name]["acceptance"] = round(float(result.acceptance.mean()), 3)
        return all(r["passed"] for r in rows.values()), {"posteriors": rows, "seed": seed}

    rule = ("every parameter: |mean - ref| < 0.25 ref sd, sd ratio in [0.9, 1.1], R-hat < 1.01, "
            "bulk ESS >= 400; no divergences")  # fmt: skip
    return _timed("posteriordb", rule, run)


def _posterior_row(checks: list[pdb.ParameterCheck], divergences: int) -> dict[str, Any]:
    return {
        "worst_z": round(max(c.z for c in checks), 3),
        "sd_ratio": [round(min(c.sd_ratio for c in checks), 3),
                     round(max(c.sd_ratio for c in checks), 3)],
        "worst_rhat": round(max(c.rhat for c in checks), 4),
        "min_ess_bulk": round(min(c.ess_bulk for c in checks)),
        "divergences": divergences,
        "passed": all(c.passed for c in checks) and divergences == 0,
    }  # fmt: skip


def sp500_window(end: str = SP500_END, window: int = 256) -> np.ndarray:
    dates, closes = data.closes()
    i = dates.index(end)
    out: np.ndarray = np.diff(np.log(closes[i - window : i + 1]))
    return out


def sp500_posterior(seed: int, reference: dict[str, Any]) -> Check:
    def run() -> tuple[bool, dict[str, Any]]:
        config = SamplerConfig(draws=1000, chains=4)
        result = fit.fit_series(sp500_window(), 2, seed, Priors(), config, 1000)
        checks = []
        for i, name in enumerate(result.names):
            if name not in reference["parameters"]:
                continue
            ref = reference["parameters"][name]
            x = result.draws[..., i].ravel()
            checks.append(pdb.ParameterCheck(
                name, float(abs(x.mean() - ref["mean"]) / ref["sd"]),
                float(x.std(ddof=1) / ref["sd"]), float(result.rhat[i]),
                float(result.ess_bulk[i]),
            ))  # fmt: skip
        row = _posterior_row(checks, int(result.sampler.divergences.sum()))
        row["chain_correlation"] = round(chain_correlation(result.draws), 3)
        row["acceptance"] = round(float(result.sampler.acceptance.mean()), 3)
        independent = row["chain_correlation"] < MAX_CHAIN_CORRELATION
        return row["passed"] and independent, row

    rule = (f"S&P 500, 256 returns to {SP500_END}, 4 chains x 1,000: the posteriordb rule "
            "against a long run (8 x 4,000), and chains independent (median over parameters "
            f"of the largest |corr| between two chains' draws < {MAX_CHAIN_CORRELATION})")
    return _timed("sp500_posterior", rule, run)


def chain_correlation(draws: np.ndarray) -> float:
    """draws [C, S, P]: per parameter the largest |correlation| between two chains' draw
    sequences; the median over parameters. Independent chains: ~1 / sqrt(S)."""
    C, _, P = draws.shape
    worst = []
    for p in range(P):
        x = draws[:, :, p]
        if np.ptp(x) == 0:
            continue
        corr = np.nan_to_num(np.corrcoef(x), nan=1.0)
        worst.append(np.abs(corr[~np.eye(C, dtype=bool)]).max())
    return float(np.median(worst)) if worst else 1.0


def worker_path(seed: int, reference: dict[str, Any]) -> Check:
    """The S&P 500 bars through the worker's window (InstrumentState) and its update
    (refresh: one cold, then warm ones), judged at WORKER_DATES against long runs."""

    def run() -> tuple[bool, dict[str, Any]]:
        dates, closes = data.closes()
        last = dates.index(WORKER_DATES[-1])
        steps = replay(dates, closes, last - WARM_UPDATES, last, ModelSpec(), seed)
        p_turbulent = {s.time: round(s.p_turbulent, 4) for s in steps}
        errors = {d: round(abs(p_turbulent[d] - reference["p_turbulent"][d]), 4)
                  for d in WORKER_DATES}  # fmt: skip
        mean_acceptance = round(float(np.mean([s.acceptance for s in steps])), 3)
        lo, hi = ACCEPTANCE_BAND
        figures = {"p_turbulent": p_turbulent, "reference": reference["p_turbulent"],
                   "abs_error": errors, "warm_acceptance_mean": mean_acceptance}
        passed = max(errors.values()) <= P_TURBULENT_TOL and lo <= mean_acceptance <= hi
        return passed, figures

    rule = (f"S&P 500 through the worker's window and updates (1 cold, {WARM_UPDATES} warm): "
            f"P(turbulent) at {' and '.join(WORKER_DATES)} within {P_TURBULENT_TOL} of a long "
            f"run on the same window; warm acceptance in {list(ACCEPTANCE_BAND)}")
    return _timed("worker_path", rule, run)


def make_reference(seed: int) -> dict[str, Any]:
    """The S&P 500 reference: long runs (8 chains, 1,000 + 4,000) of the unmutated model."""
    config = SamplerConfig(draws=4000, chains=8)
    result = fit.fit_series(sp500_window(), 2, seed, Priors(), config, 1000)
    flat = result.draws.reshape(-1, result.draws.shape[-1])
    parameters = {
        name: {"mean": float(flat[:, i].mean()), "sd": float(flat[:, i].std(ddof=1)),
               "rhat": float(result.rhat[i]), "ess_bulk": float(result.ess_bulk[i])}
        for i, name in enumerate(result.names) if name not in ("P[1,1]", "P[2,2]")
    }  # fmt: skip
    p_turbulent = {}
    for date in WORKER_DATES:
        run = fit.fit_series(sp500_window(date), 2, seed, Priors(), config, 1000)
        p_turbulent[date] = float(run.filtered[-1, -1])
    return {"window_end": SP500_END, "seed": seed, "chains": 8, "warmup": 1000,
            "draws": 4000, "parameters": parameters, "p_turbulent": p_turbulent,
            "max_rhat": float(result.rhat.max())}  # fmt: skip
