"""Fit the model to ONE return series (the research tool behind `regime-trader fit`).

The whole series is the window: the same scaling, priors, log density and sampler as an
update, with a longer warm-up and more draws. Summaries are in the units of the input
returns; the filtered and smoothed regime probabilities at every bar are averaged over
thinned draws.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model import rng
from regime_model.diagnostics import convergence, ebfmi
from regime_model.hmm import gaussian_log_emissions, messages, relative_emissions
from regime_model.params import constrain, n_params
from regime_model.posterior import log_density_and_grad, uniform_init
from regime_model.sampler import LaneStart, SamplerConfig, SampleResult, sample
from regime_model.scaling import robust_scale
from regime_model.types import FloatArray, Priors, Progress

INIT_JITTER, COLD_STEP_SIZE = 0.5, 0.1
FILTER_DRAWS = 40  # draws averaged for the per-bar filtered probabilities


class FitResult(NamedTuple):
    names: list[str]  # "mu[1]", "sigma[1]", "P[1,2]" (1-based, rows = "from")
    draws: FloatArray  # [C, S, P] constrained, input units
    rhat: FloatArray  # [P]
    ess_bulk: FloatArray  # [P]
    ess_tail: FloatArray  # [P]
    filtered: FloatArray  # [T, K] posterior mean P(regime at bar t | y_<=t)
    smoothed: FloatArray  # [T, K] posterior mean P(regime at bar t | all of y)
    sampler: SampleResult


def parameter_names(K: int) -> list[str]:
    pairs = [f"P[{i + 1},{j + 1}]" for i in range(K) for j in range(K)]
    return [*(f"mu[{k + 1}]" for k in range(K)), *(f"sigma[{k + 1}]" for k in range(K)), *pairs]


def constrained(theta: FloatArray, K: int, scale: float) -> FloatArray:
    """theta [M, D] -> [M, P] in input units, columns as `parameter_names`."""
    c = constrain(theta, K)
    P = np.exp(c.log_trans).reshape(len(theta), -1)
    return np.concatenate([c.mu * scale, np.exp(c.log_sigma) * scale, P], axis=1)


def _start(K: int, C: int, warmup: int, priors: Priors, stream: rng.Stream) -> LaneStart:
    from regime_model.update import prior_centre  # noqa: PLC0415 - update imports the sampler too

    D = n_params(K)
    jitter = INIT_JITTER * (2.0 * rng.uniform(stream, 0, rng.Purpose.INIT, D) - 1.0)
    return LaneStart(
        prior_centre(K, priors) + jitter,
        np.full(C, COLD_STEP_SIZE),
        np.ones((C, D)),
        np.full(C, warmup, dtype=np.int64),
        np.ones(C, dtype=bool),
    )


def regime_paths(theta: FloatArray, y: FloatArray, K: int) -> tuple[FloatArray, FloatArray]:
    """Means over draws theta [M, D] of the filtered and the smoothed probabilities, [T, K]
    each: P(regime at t | y up to t) and P(regime at t | the whole series)."""
    c = constrain(theta, K)
    ys = np.broadcast_to(y, (len(theta), len(y)))
    log_e = gaussian_log_emissions(ys, c.mu, c.log_sigma)
    alpha, beta = messages(
        relative_emissions(log_e).rel, np.exp(c.log_trans), uniform_init(len(theta), K)
    )
    smoothed = alpha * beta
    smoothed /= smoothed.sum(axis=0)
    return alpha.mean(axis=1).T, smoothed.mean(axis=1).T


def fit_series(
    returns: FloatArray,
    K: int,
    seed: int,
    priors: Priors,
    config: SamplerConfig,
    warmup: int,
    progress: Progress | None = None,
) -> FitResult:
    returns = np.asarray(returns, dtype=np.float64)
    scale = float(robust_scale(returns[None])[0])
    y = returns / scale
    C = config.chains
    stream = rng.make_stream(seed, np.zeros(C, np.uint32), np.arange(C, dtype=np.uint32), 0)
    zero = np.zeros(1, np.uint32)
    ys = np.repeat(y[None], C, axis=0)

    def fn(theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        return log_density_and_grad(theta, ys, K, priors)

    result = sample(
        fn,
        _start(K, C, warmup, priors, stream),
        stream,
        rng.make_stream(seed, zero, zero, 0),
        config,
        progress,
    )
    S, D = config.draws, n_params(K)
    named = constrained(result.draws.reshape(-1, D), K, scale).reshape(C, S, -1)
    diag = convergence(named[None])
    thin = max(1, C * S // FILTER_DRAWS)
    filtered, smoothed = regime_paths(result.draws.reshape(-1, D)[::thin], y, K)
    return FitResult(
        parameter_names(K),
        named,
        diag.rhat[0],
        diag.ess_bulk[0],
        diag.ess_tail[0],
        filtered,
        smoothed,
        result,
    )


def chain_ebfmi(result: SampleResult) -> FloatArray:
    return ebfmi(result.energy)
