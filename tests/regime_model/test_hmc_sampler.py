"""The batched HMC sampler on targets whose answers are known."""

from __future__ import annotations

import numpy as np

from regime_model import hmc, rng, transition_keys
from regime_model.diagnostics import convergence
from regime_model.sampler import LaneStart, SamplerConfig, sample
from regime_model.types import FloatArray

CHAINS = 4


def gaussian(mean: FloatArray, sd: FloatArray):
    """Independent normals, one (mean, sd) row per lane."""

    def fn(x: FloatArray) -> tuple[FloatArray, FloatArray]:
        z = (x - mean) / sd
        return -0.5 * (z**2).sum(axis=1), -z / sd

    return fn


def streams(L: int) -> tuple[rng.Stream, rng.Stream]:
    lanes = rng.make_stream(
        3,
        np.repeat(np.arange(L // CHAINS, dtype=np.uint32), CHAINS),
        np.tile(np.arange(CHAINS, dtype=np.uint32), L // CHAINS),
        1,
    )
    zero = np.zeros(1, np.uint32)
    return lanes, rng.make_stream(3, zero, zero, 1)


def start(L: int, D: int, warmup: int) -> LaneStart:
    return LaneStart(
        np.zeros((L, D)),
        np.full(L, 0.1),
        np.ones((L, D)),
        np.full(L, warmup),
        np.ones(L, dtype=bool),
    )


def test_draws_recover_the_mean_and_sd_of_each_instruments_gaussian() -> None:
    """Each of 9 means and 9 sds within 4 Monte Carlo standard errors of the truth: the
    mean's MCSE is sd / sqrt(ESS), the sd's sd / sqrt(2 ESS of the squared deviations).
    A right sampler fails one of the 18 by chance with probability ~1e-3 (the seed is
    fixed); the sampler without its Metropolis correction fails it (checked by hand; the
    planted faults of `bench validate --mutants` are the systematic check)."""
    instruments, D, S = 3, 3, 500
    L = instruments * CHAINS
    mean = np.repeat([[1.0, -2.0, 0.0], [0.0, 5.0, 1.0], [-3.0, 0.0, 2.0]], CHAINS, axis=0)
    sd = np.repeat([[1.0, 0.1, 3.0], [0.5, 2.0, 0.05], [1.0, 1.0, 1.0]], CHAINS, axis=0)
    lanes, schedule = streams(L)
    config = SamplerConfig(draws=S, chains=CHAINS)
    result = sample(gaussian(mean, sd), start(L, D, 300), lanes, schedule, config)
    chains = result.draws.reshape(instruments, CHAINS, S, D)
    true_mean, true_sd = mean[::CHAINS], sd[::CHAINS]
    ess_mean = convergence(chains).ess_bulk
    ess_square = convergence((chains - true_mean[:, None, None]) ** 2).ess_bulk
    pooled = chains.reshape(instruments, CHAINS * S, D)
    assert (np.abs(pooled.mean(axis=1) - true_mean) < 4 * true_sd / np.sqrt(ess_mean)).all()
    assert (np.abs(pooled.std(axis=1) / true_sd - 1) < 4 / np.sqrt(2 * ess_square)).all()
    # The adapted metric learned the scales: inverse mass ~ variance.
    assert (np.abs(np.log(result.inv_mass[::CHAINS] / true_sd**2)) < np.log(2)).all()
    assert (result.divergences == 0).all()


def test_a_non_finite_density_is_a_divergence_never_an_exception() -> None:
    L, D = 8, 2

    def walled(x: FloatArray) -> tuple[FloatArray, FloatArray]:
        logp = -0.5 * (x**2).sum(axis=1)
        logp = np.where(x[:, 0] > 0.5, np.nan, logp)  # a numerical fault past a wall
        return logp, np.where(x[:, :1] > 0.5, np.inf, -x)

    lanes, schedule = streams(L)
    result = sample(
        walled,
        start(L, D, 50),
        lanes,
        schedule,
        SamplerConfig(draws=100, chains=CHAINS, steps_min=8, steps_max=8),
    )
    assert result.divergences.sum() > 0
    assert np.isfinite(result.draws).all() and (result.draws[:, :, 0] <= 0.5).all()


def test_a_lane_stuck_on_a_faulted_start_moves_once_a_proposal_is_finite() -> None:
    fn = gaussian(np.zeros((4, 1)), np.ones((4, 1)))

    def faulted_at_start(x: FloatArray) -> tuple[FloatArray, FloatArray]:
        logp, grad = fn(x)
        return np.where(x[:, 0] == 7.0, np.nan, logp), grad

    state = hmc.init(np.full((4, 1), 7.0), faulted_at_start)
    assert np.isneginf(state.logdensity).all() and (state.grad == 0).all()
    params = hmc.HMCParams(np.full(4, 0.5), np.ones((4, 1)))
    new, info = hmc.step(hmc.Key(streams(4)[0], 0), state, params, faulted_at_start, 3)
    assert info.is_accepted.all() and np.isfinite(new.logdensity).all()


def test_a_lane_with_fewer_leapfrog_steps_ends_where_its_solo_run_would() -> None:
    fn = gaussian(np.zeros((2, 2)), np.array([[1.0, 2.0], [0.5, 1.0]]))
    state = hmc.init(np.array([[0.3, -1.0], [1.0, 0.2]]), fn)
    params = hmc.HMCParams(np.array([0.2, 0.3]), np.ones((2, 2)))
    four = streams(4)[0]
    key = hmc.Key(rng.Stream(four.key[:2], four.high[:2]), 5)
    _, batched = hmc.step(key, state, params, fn, np.array([3, 7]))
    solo_fn = gaussian(np.zeros((1, 2)), np.array([[1.0, 2.0]]))
    solo_key = hmc.Key(rng.Stream(key.stream.key[:1], key.stream.high[:1]), 5)
    solo_state = hmc.HMCState(*(x[:1] for x in state))
    solo_params = hmc.HMCParams(params.step_size[:1], params.inv_mass[:1])
    _, solo = hmc.step(solo_key, solo_state, solo_params, solo_fn, 3)
    np.testing.assert_array_equal(batched.proposal[0], solo.proposal[0])
    assert batched.num_steps == 7 and batched.lane_steps.tolist() == [3, 7]


def test_chees_lengthens_trajectories_for_a_wide_target_and_recovers_its_moments() -> None:
    instruments, D = 2, 2
    L = instruments * CHAINS
    mean = np.zeros((L, D))
    sd = np.repeat([[1.0, 1.0], [1.0, 1.0]], CHAINS, axis=0)
    lanes, schedule = streams(L)
    result = sample(
        gaussian(mean, sd),
        start(L, D, 300),
        lanes,
        schedule,
        SamplerConfig(draws=300, chains=CHAINS, trajectory="chees"),
    )
    pooled = result.draws.reshape(instruments, CHAINS * 300, D)
    assert (np.abs(pooled.mean(axis=1)) < 0.15).all()
    assert (np.abs(pooled.std(axis=1) - 1) < 0.15).all()
    # The ChEES optimum for a standard normal is an integration time near pi/2 or beyond;
    # the starting length (0.1 x 5 steps) was far shorter.
    assert (result.trajectory_length > 1.0).all(), result.trajectory_length
    assert (result.divergences == 0).all()


def test_a_density_that_fuses_trajectories_gets_one_call_per_transition() -> None:
    fn = gaussian(np.zeros((3, 2)), np.array([[1.0, 2.0], [0.5, 1.0], [3.0, 0.2]]))
    calls: list[int] = []

    def trajectory(*args: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        calls.append(int(args[-1].max()))
        return hmc.host_leapfrog(fn, *args)

    def no_single_evaluations(x: FloatArray) -> tuple[FloatArray, FloatArray]:
        raise AssertionError("a transition evaluated the density outside its trajectory")

    state = hmc.init(np.array([[0.3, -1.0], [1.0, 0.2], [0.0, 0.5]]), fn)
    params = hmc.HMCParams(np.full(3, 0.2), np.ones((3, 2)))
    four = streams(4)[0]
    key = hmc.Key(rng.Stream(four.key[:3], four.high[:3]), 0)
    fused = hmc.FusedDensity(no_single_evaluations, trajectory)
    new, info = hmc.step(key, state, params, fused, np.array([2, 5, 3]))
    plain_new, plain_info = hmc.step(key, state, params, fn, np.array([2, 5, 3]))
    assert calls == [5]
    for a, b in zip((*new, info.energy), (*plain_new, plain_info.energy), strict=True):
        np.testing.assert_array_equal(a, b)


def test_drawing_the_random_numbers_ahead_in_blocks_changes_no_draw(monkeypatch) -> None:
    fn = gaussian(np.array([[1.0, -2.0]] * CHAINS), np.array([[0.5, 2.0]] * CHAINS))
    lanes, schedule = streams(CHAINS)
    config = SamplerConfig(draws=30, chains=CHAINS)
    blocked = sample(fn, start(CHAINS, 2, 40), lanes, schedule, config)
    monkeypatch.setattr(transition_keys, "BLOCK", 1)
    one_by_one = sample(fn, start(CHAINS, 2, 40), lanes, schedule, config)
    assert np.array_equal(blocked.draws, one_by_one.draws)
    assert np.array_equal(blocked.step_size, one_by_one.step_size)


def test_the_split_integrator_moves_a_unit_gaussian_exactly() -> None:
    """For log p = -|x|^2 / 2 the residual force is zero: a quarter period maps (x, p) to
    (p, -x), energy is conserved to rounding, and the Metropolis test always accepts."""
    fn = gaussian(np.zeros((3, 4)), np.ones((3, 4)))
    x = np.random.default_rng(1).standard_normal((3, 4))
    p = np.random.default_rng(2).standard_normal((3, 4))
    _, g = fn(x)
    end = hmc.split_leapfrog(fn, x, p, g, np.full(3, np.pi / 2), np.ones((3, 4)), np.ones(3, int))
    assert np.abs(end.position - p).max() < 1e-14 and np.abs(end.momentum + x).max() < 1e-14


def test_the_split_integrator_is_reversible_on_a_skewed_target() -> None:
    """Flip the momentum at the end and integrate again: back at the start (to rounding),
    which with volume preservation is what keeps the Metropolis test exact."""

    def skewed(x: FloatArray) -> tuple[FloatArray, FloatArray]:
        return (-0.5 * (x**2).sum(1) - 0.3 * (x[:, 0] ** 3) / 3 - 0.1 * x[:, 1] ** 4,
                -x - np.stack([0.3 * x[:, 0] ** 2, 0.4 * x[:, 1] ** 3], 1))  # fmt: skip

    x = np.random.default_rng(3).normal(0, 0.5, (5, 2))
    p = np.random.default_rng(4).standard_normal((5, 2))
    eps, inv_mass, n = np.full(5, 0.7), np.array([[1.0, 0.5]] * 5), np.array([1, 2, 3, 3, 2])
    there = hmc.split_leapfrog(skewed, x, p, skewed(x)[1], eps, inv_mass, n)
    back = hmc.split_leapfrog(skewed, there.position, -there.momentum, there.grad, eps, inv_mass, n)
    assert np.abs(back.position - x).max() < 1e-12 and np.abs(back.momentum + p).max() < 1e-12
