"""Simulation-based calibration of our model: ranks of the truth among posterior draws are
uniform (chi-square, Bonferroni over parameters). The CI version is short; the full one
(200 datasets per K) is `pytest -m slow` and `regime-trader bench validate` (docs/validation.md)."""

from __future__ import annotations

import numpy as np
import pytest

from regime_model.params import n_params
from regime_model.sampler import SamplerConfig
from regime_model.types import Priors
from regime_model.validation.sbc import calibrate, chi_square_uniformity, prior_draws, ranks

FAMILY_LEVEL = 0.01


def test_ranks_count_the_draws_below_the_truth() -> None:
    draws = np.arange(8.0).reshape(1, 2, 4, 1)  # pooled thinned (thin 2): 1, 3, 5, 7
    assert ranks(draws, np.array([[4.0]]), thin=2).tolist() == [[2]]


def test_uniform_ranks_pass_and_piled_up_ranks_fail_the_chi_square() -> None:
    gen = np.random.default_rng(0)
    uniform = gen.integers(0, 101, size=(400, 1))
    piled = np.minimum(gen.integers(0, 101, size=(400, 1)), 50)
    assert chi_square_uniformity(uniform, 100, 10)[1][0] > 0.01
    assert chi_square_uniformity(piled, 100, 10)[1][0] < 1e-6


def test_prior_draws_have_the_prior_moments() -> None:
    priors = Priors()
    theta = prior_draws(20_000, 2, priors, np.random.default_rng(1))
    assert abs(theta[:, 0].std() - priors.mu_scale) < 0.01
    assert abs(theta[:, 2].mean() - priors.log_sigma_loc) < 0.03
    stay = 1.0 / (1.0 + np.exp(theta[:, 4]))  # P_00 from u_0 = log(P_01 / P_00)
    assert abs(stay.mean() - priors.alpha_stay / (priors.alpha_stay + priors.alpha_move)) < 0.005


def _assert_calibrated(
    K: int, n: int, T: int, warmup: int, draws: int, thin: int, bins: int, shift: bool = False
) -> None:
    config = SamplerConfig(draws=draws, chains=4, shift_moves=shift)
    c = calibrate(n, K, T, Priors(), config, warmup, 11, thin, bins)
    assert c.divergences <= n  # rare, and never more than one per dataset on average
    assert (c.p_value > FAMILY_LEVEL / n_params(K)).all(), (c.chi2, c.p_value)


# K = 2 with the daemon's level-shift moves (regime_model/level_shift.py), K = 3 without:
# each sampler path calibrated at every commit, at the cost of two runs.
@pytest.mark.parametrize(("K", "shift"), [(2, True), (3, False)])
def test_short_sbc_ranks_are_uniform(K: int, shift: bool) -> None:
    _assert_calibrated(K, n=40, T=100, warmup=200, draws=100, thin=4, bins=5, shift=shift)


@pytest.mark.slow
@pytest.mark.parametrize("shift", [False, True])
@pytest.mark.parametrize("K", [2, 3])
def test_full_sbc_ranks_are_uniform(K: int, shift: bool) -> None:
    _assert_calibrated(K, n=200, T=128, warmup=300, draws=200, thin=8, bins=10, shift=shift)
