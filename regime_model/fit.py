"""Fit the model to ONE return series (the research tool behind `regime-trader fit`).

The whole series is the window: the same scaling, priors and log density as an update.
Unlike an update, which carries its metric from bar to bar, a fit starts from nothing, so
it first climbs from each chain's jittered start to a mode (`laplace`) and asks how close
the posterior is to the Gaussian there: the importance ESS of draws from that Laplace
approximation. Then a ladder of samplers, each run only if the one before missed the
convergence rule (`meets_rule`), the first taken from that answer:

- "split-1" (a near-Gaussian posterior: long series): HMC in the space whitened by the
  mode's curvature (a dense metric from one Newton climb), with the split integrator
  that moves the Gaussian part exactly (`hmc.split_leapfrog`). One step of a quarter
  period accepts ~0.85 and lands nearly independent of its start: ONE gradient per draw,
  and the warm-up only tunes the step. On S&P 500's 5,030 returns it needs ~540
  gradients where the adapted sampler needs ~4,500 for the same diagnostics.
- "split-2" (a skewed posterior: windows of 500-2,000 returns): the same quarter period
  in two steps. Accepting ~0.96 instead of ~0.85, it no longer sticks where the
  posterior leaves the Gaussian, for twice the gradients.
- "adapted" (where the ladder starts for windows under MIN_SPLIT_RETURNS returns and
  for posteriors far from any Gaussian, importance ESS < 0.1): the update's sampler
  with a long warm-up, a diagonal metric adapted over Stan's windows and 3-7 leapfrog
  steps. Its starts are the jittered prior centres, not the modes, so R-hat still sees
  chains that began apart.

Summaries are in the units of the input returns; the filtered and smoothed regime
probabilities at every bar are averaged over thinned draws. docs/fit.md has the figures.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model import laplace, rng
from regime_model.diagnostics import convergence, ebfmi
from regime_model.hmm import gaussian_log_emissions, messages, relative_emissions
from regime_model.params import constrain, n_params
from regime_model.posterior import log_density_and_grad, uniform_init
from regime_model.sampler import LaneStart, SamplerConfig, SampleResult, sample
from regime_model.scaling import robust_scale
from regime_model.types import FloatArray, LogDensityFn, Priors, Progress

INIT_JITTER, COLD_STEP_SIZE = 0.5, 0.1  # the adapted sampler's start
SPLIT_WARMUP, ADAPTED_WARMUP = 40, 400  # warm-up iterations when the caller gives none
# The ladder starts at "split-1" when the Laplace approximation's importance ESS (a
# fraction of its draws) is at least this: S&P 500's 5,030 returns give 0.97, windows of
# 255-2,261 returns 0.14-0.95 (the estimate from 64 draws is noisy; docs/fit.md).
SPLIT_MIN_LAPLACE_ESS = 0.9
# Below this the Laplace approximation says next to nothing and the ladder starts at
# "adapted": K = 4 on S&P 500 gave 0.026 and split-2 missed the rule; K = 3 gave 0.36
# and a window of 1,003 returns 0.79, where split-2 met it (docs/fit.md).
SPLIT_TWO_MIN_LAPLACE_ESS = 0.1
# Below this many returns the ladder starts at "adapted": split-2 missed the rule on 2 of 3
# seeds at 255 returns and met it on 3 of 3 at 502 (docs/fit.md). A miss only costs time.
MIN_SPLIT_RETURNS = 400
LADDER = ("split-1", "split-2", "adapted")
QUARTER_PERIOD = 0.5 * float(np.pi)  # the split trajectory: decorrelates location and spread
RHAT_RULE = 1.01
FILTER_DRAWS = 40  # draws averaged for the per-bar filtered probabilities


class FitResult(NamedTuple):
    names: list[str]  # "mu[1]", "sigma[1]", "P[1,2]" (1-based, rows = "from")
    draws: FloatArray  # [C, S, P] constrained, input units
    theta: FloatArray  # [C, S, D] the same draws, unconstrained (the model's parameters)
    rhat: FloatArray  # [P]
    ess_bulk: FloatArray  # [P]
    ess_tail: FloatArray  # [P]
    filtered: FloatArray  # [T, K] posterior mean P(regime at bar t | y_<=t)
    smoothed: FloatArray  # [T, K] posterior mean P(regime at bar t | all of y)
    sampler: SampleResult  # after a split run its draws and metric are in the whitened space
    tried: tuple[str, ...]  # samplers run (names in LADDER), the reported one last
    warmup: int  # warm-up iterations of the reported run
    modes: laplace.Laplace  # each chain's climb: its mode and the whitening there
    laplace_ess: float  # importance ESS fraction of draws from the Laplace approximation


def parameter_names(K: int) -> list[str]:
    pairs = [f"P[{i + 1},{j + 1}]" for i in range(K) for j in range(K)]
    return [*(f"mu[{k + 1}]" for k in range(K)), *(f"sigma[{k + 1}]" for k in range(K)), *pairs]


def constrained(theta: FloatArray, K: int, scale: float) -> FloatArray:
    """theta [M, D] -> [M, P] in input units, columns as `parameter_names`."""
    c = constrain(theta, K)
    P = np.exp(c.log_trans).reshape(len(theta), -1)
    return np.concatenate([c.mu * scale, np.exp(c.log_sigma) * scale, P], axis=1)


def _jittered_centres(K: int, C: int, priors: Priors, stream: rng.Stream) -> FloatArray:
    from regime_model.update import prior_centre  # noqa: PLC0415 - update imports the sampler too

    jitter = INIT_JITTER * (2.0 * rng.uniform(stream, 0, rng.Purpose.INIT, n_params(K)) - 1.0)
    out: FloatArray = prior_centre(K, priors) + jitter
    return out


def _whitened_start(C: int, D: int, warmup: int, step: float, stream: rng.Stream) -> LaneStart:
    """Each chain starts at a draw of its Laplace approximation (z ~ N(0, I)) with the
    longest step allowed; the warm-up tunes only the step."""
    return LaneStart(
        rng.normal(stream, 1, rng.Purpose.INIT, D),
        np.full(C, step),
        np.ones((C, D)),
        np.full(C, warmup, dtype=np.int64),
        np.zeros(C, dtype=bool),
    )


def _adapted_start(start: FloatArray, warmup: int) -> LaneStart:
    C, D = start.shape
    return LaneStart(
        start, np.full(C, COLD_STEP_SIZE), np.ones((C, D)), np.full(C, warmup, dtype=np.int64),
        np.ones(C, dtype=bool),
    )  # fmt: skip


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
    warmup: int | None = None,
    progress: Progress | None = None,
    samplers: tuple[str, ...] | None = None,
) -> FitResult:
    """Sample the posterior of the whole series; `config` gives the draws and chains
    (and, for the adapted sampler, its trajectory); `warmup` None: the sampler's own.

    A run that misses the convergence rule (`meets_rule`) is not reported while a sampler
    is left to try: the next runs instead, and `tried` says so. `samplers` None: the
    LADDER from `first_rung`; else these names of LADDER, in this order (measurements
    of one sampler: docs/bench-results/fit_rungs.py).
    """
    returns = np.asarray(returns, dtype=np.float64)
    scale = float(robust_scale(returns[None])[0])
    y = returns / scale
    C = config.chains
    stream = rng.make_stream(seed, np.zeros(C, np.uint32), np.arange(C, dtype=np.uint32), 0)

    def fn(theta: FloatArray) -> tuple[FloatArray, FloatArray]:
        return log_density_and_grad(theta, np.broadcast_to(y, (len(theta), len(y))), K, priors)

    centres = _jittered_centres(K, C, priors, stream)
    modes = laplace.find_modes(fn, centres)
    quality = laplace.importance_ess(fn, modes, stream)
    run = _Run(y, scale, K, seed, stream, progress, modes, quality)
    if samplers is not None and (not samplers or not set(samplers) <= set(LADDER)):
        raise ValueError(f"samplers must name one or more of {LADDER}, got {samplers!r}")
    rungs = LADDER[first_rung(quality, len(returns)):] if samplers is None else samplers
    for i, name in enumerate(rungs):
        last = i == len(rungs) - 1
        if name == "adapted":
            start = _adapted_start(centres, ADAPTED_WARMUP if warmup is None else warmup)
            result = run.finish(fn, start, config, rungs[: i + 1], discard_unless_rule=not last)
        else:
            steps = 1 if name == "split-1" else 2
            step = QUARTER_PERIOD / steps
            split = config._replace(steps_min=steps, steps_max=steps, max_step_size=step)
            length = SPLIT_WARMUP if warmup is None else warmup
            start = _whitened_start(C, n_params(K), length, step, stream)
            result = run.finish(laplace.whitened(fn, modes), start, split, rungs[: i + 1],
                                discard_unless_rule=not last)  # fmt: skip
        if result is not None:
            return result
    raise AssertionError("the last sampler tried always reports")


def first_rung(laplace_ess: float, returns: int) -> int:
    """Where the ladder starts (an index of LADDER), from the importance check and the
    series' length."""
    if returns < MIN_SPLIT_RETURNS or laplace_ess < SPLIT_TWO_MIN_LAPLACE_ESS:
        return LADDER.index("adapted")
    return LADDER.index("split-1" if laplace_ess >= SPLIT_MIN_LAPLACE_ESS else "split-2")


def meets_rule(fit: FitResult) -> bool:
    """R-hat <= 1.01 on every parameter, and bulk and tail ESS each at least a fifth of
    the draws (400 of the default 4 x 500)."""
    return _meets(fit.rhat, fit.ess_bulk, fit.ess_tail, fit.draws.shape[0] * fit.draws.shape[1])


def _meets(rhat: FloatArray, ess_bulk: FloatArray, ess_tail: FloatArray, draws: int) -> bool:
    least = 0.2 * draws
    return bool(rhat.max() <= RHAT_RULE and min(ess_bulk.min(), ess_tail.min()) >= least)


class _Run(NamedTuple):
    y: FloatArray  # the returns over their robust scale
    scale: float
    K: int
    seed: int
    stream: rng.Stream
    progress: Progress | None
    modes: laplace.Laplace
    laplace_ess: float

    def finish(
        self, density: LogDensityFn, start: LaneStart, config: SamplerConfig,
        tried: tuple[str, ...], discard_unless_rule: bool = True,
    ) -> FitResult | None:  # fmt: skip
        """Sample (in the whitened space after a split run), map the draws back to theta,
        summarise; None for a run that misses the rule when `discard_unless_rule`, before
        its per-bar paths are computed."""
        zero = np.zeros(1, np.uint32)
        schedule = rng.make_stream(self.seed, zero, zero, 0)
        result = sample(density, start, self.stream, schedule, config, self.progress)
        draws = result.draws
        if tried[-1] != "adapted":
            draws = laplace.to_theta(self.modes, draws)
        C, S, D = draws.shape
        named = constrained(draws.reshape(-1, D), self.K, self.scale).reshape(C, S, -1)
        diag = convergence(named[None])
        rhat, bulk, tail = diag.rhat[0], diag.ess_bulk[0], diag.ess_tail[0]
        if discard_unless_rule and not _meets(rhat, bulk, tail, C * S):
            return None
        thin = max(1, C * S // FILTER_DRAWS)
        filtered, smoothed = regime_paths(draws.reshape(-1, D)[::thin], self.y, self.K)
        return FitResult(
            parameter_names(self.K), named, draws, rhat, bulk, tail, filtered, smoothed,
            result, tried, int(start.warmup.max()), self.modes, self.laplace_ess,
        )  # fmt: skip


def chain_ebfmi(result: SampleResult) -> FloatArray:
    return ebfmi(result.energy)
