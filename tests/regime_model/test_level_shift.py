"""The level-shift move (regime_model.level_shift): an exact, volume-preserving pair of
maps, so a Metropolis test on it keeps the posterior; and on a window with two readings
it moves chains between them far more often than HMC alone."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from gpu_backend.numpy_backend import NumpyBackend
from regime_model import hmc
from regime_model.jump_move import moved_by_parts
from regime_model.level_shift import move_for, shifted
from regime_model.params import constrain, n_params
from regime_model.sampler import sample
from regime_model.spec import ModelSpec
from regime_model.update import build_batch
from service.bench.series_replay import KEY, bars
from service.bench.validate_data import closes
from service.model_state import InstrumentState


def random_theta(K: int, L: int = 16) -> np.ndarray:
    return np.random.default_rng(K).normal(0.0, 1.5, (L, n_params(K)))


@pytest.mark.parametrize("K", [2, 3, 4])
def test_down_undoes_up_and_up_undoes_down(K: int) -> None:
    theta = random_theta(K)
    up = np.arange(len(theta)) % 2 == 0
    back = shifted(shifted(theta, up, K), ~up, K)
    # s1 + g - g: one rounding of the sum at most
    np.testing.assert_allclose(back, theta, rtol=0, atol=1e-14)


@pytest.mark.parametrize("K", [2, 3, 4])
def test_up_moves_every_regime_one_level_up(K: int) -> None:
    theta = random_theta(K)
    old = constrain(theta, K)
    new = constrain(shifted(theta, np.ones(len(theta), bool), K), K)
    up = [(k + 1) % K for k in range(K)]
    np.testing.assert_allclose(new.log_sigma[:, :-1], old.log_sigma[:, 1:], atol=1e-13)
    first_gap = old.log_sigma[:, 1] - old.log_sigma[:, 0]
    np.testing.assert_allclose(new.log_sigma[:, -1], old.log_sigma[:, -1] + first_gap, atol=1e-13)
    np.testing.assert_array_equal(new.mu, old.mu[:, up])
    np.testing.assert_allclose(new.log_trans, old.log_trans[:, up][:, :, up], atol=1e-13)
    assert (np.diff(new.log_sigma, axis=1) > 0).all(), "the regimes stay ordered by sigma"


@pytest.mark.parametrize("K", [2, 3])
def test_each_map_preserves_volume(K: int) -> None:
    """|det J| = 1, so the acceptance ratio needs no Jacobian term: central differences
    (error about h^2 = 1e-10 on a map this smooth), tolerance 1e-6."""
    theta = random_theta(K, L=4)
    h, D = 1e-5, theta.shape[1]
    for up in (True, False):
        direction = np.full(1, up)
        for row in theta:
            J = np.empty((D, D))
            for d in range(D):
                e = np.zeros(D)
                e[d] = h
                J[:, d] = (shifted((row + e)[None], direction, K)
                           - shifted((row - e)[None], direction, K))[0] / (2 * h)
            assert abs(abs(np.linalg.det(J)) - 1.0) < 1e-6


def reading_changes(shift_moves: bool) -> tuple[int, float]:
    """4 chains on the S&P 500 window ending 2008-08-13 (two readings: docs/benchmarks.md),
    100 warm-up iterations and 200 draws: how often a chain's P(turbulent) crosses 0.5
    from one draw to the next, summed over chains, and the mean P(turbulent)."""
    dates, prices = closes()
    i = dates.index("2008-08-13")
    spec = ModelSpec(chains=4, draws=200, warmup_cold=100, shift_moves=shift_moves)
    state = InstrumentState("SPX")
    state.append(bars(dates, prices, i - spec.window, i + 1), spec.window)
    batch, _ = build_batch(state.returns[None], [None], KEY, 1, 7, spec)
    backend = NumpyBackend()
    result = backend.run_update(batch)
    draws = result.draws.reshape(-1, result.draws.shape[-1])
    y = np.repeat(batch.y[:1], len(draws), axis=0)
    p = backend.hmm_predictive(draws, y, 2).filtered_last[:, 1].reshape(4, -1)
    return int((np.diff(p > 0.5, axis=1) != 0).sum()), float(p.mean())


def test_shift_moves_carry_chains_between_the_two_readings_of_a_2008_window() -> None:
    without, _ = reading_changes(shift_moves=False)
    with_moves, mean = reading_changes(shift_moves=True)
    assert with_moves >= 4 * max(without, 2), (without, with_moves)
    # the strong reference (16 chains x 10,000 draws) for this window: 0.789; 800 draws
    # of chains that now mix between readings land within 0.1 of it
    assert abs(mean - 0.789) < 0.1, mean


def test_the_sampler_refuses_a_shift_flag_without_its_map_and_a_map_without_the_flag() -> None:
    """Otherwise a caller that sets SamplerConfig.shift_moves but passes no map (or the
    reverse) would silently run another sampler than the one it asked for."""
    spec = ModelSpec(window=32, chains=2, warmup_cold=2, draws=4)
    batch, _ = build_batch(np.zeros((1, 32)) + 0.01 * np.arange(32), [None], KEY, 1, 7, spec)
    density = NumpyBackend().hmm_value_and_grad
    args = (lambda th: density(th, batch.y, 2, spec.priors), batch.start, batch.stream,
            batch.schedule)
    with pytest.raises(ValueError, match="shift_moves needs the model's jump map"):
        sample(*args, batch.config)  # the flag (ModelSpec's default), no map
    with pytest.raises(ValueError, match="shift_moves needs the model's jump map"):
        sample(*args, batch.config._replace(shift_moves=False), jump=move_for(2, True))
    assert move_for(2, False) is None


def test_both_trajectories_at_once_decide_and_draw_as_the_move_then_the_step() -> None:
    """jump_move.transition with a density that runs the step's trajectory from the lanes'
    positions and from the move's proposals before the move is decided (what a GPU does
    in one submission), built here from the numpy backend's own calls (moved_by_parts):
    the same draws, bit for bit, as the move and then the step, cold lanes through the
    whole warm-up on the 2008 window whose moves are accepted."""
    dates, prices = closes()
    i = dates.index("2008-08-13")
    spec = ModelSpec(chains=4, draws=20, warmup_cold=60)
    state = InstrumentState("SPX")
    state.append(bars(dates, prices, i - spec.window, i + 1), spec.window)
    batch, _ = build_batch(state.returns[None], [None], KEY, 1, 7, spec)
    backend, K, priors = NumpyBackend(), 2, spec.priors
    density = partial(backend.hmm_value_and_grad, y=batch.y, n_states=K, priors=priors)
    leapfrog = partial(backend.leapfrog, y=batch.y, n_states=K, priors=priors)
    plain = hmc.FusedDensity(density, leapfrog)
    both = hmc.FusedDensity(density, leapfrog, partial(moved_by_parts, density, leapfrog))
    args = (batch.start, batch.stream, batch.schedule, batch.config)
    one_by_one = sample(plain, *args, jump=move_for(K, True))
    at_once = sample(both, *args, jump=move_for(K, True))
    np.testing.assert_array_equal(at_once.draws, one_by_one.draws)
    np.testing.assert_array_equal(at_once.shift_rate, one_by_one.shift_rate)
    assert (one_by_one.shift_rate > 0.01).any(), "no move was likely: the test would prove little"
