"""Rank-normalised split R-hat and bulk ESS on chains with known behaviour."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from regime_model.diagnostics import average_ranks, convergence, ebfmi, normal_quantile


def test_normal_quantile_matches_the_standard_library() -> None:
    p = np.array([1e-9, 1e-3, 0.02, 0.3, 0.5, 0.9, 0.999, 1 - 1e-9])
    expected = [NormalDist().inv_cdf(x) for x in p]
    np.testing.assert_allclose(normal_quantile(p), expected, rtol=1e-8)


def test_ties_share_their_average_rank() -> None:
    np.testing.assert_array_equal(average_ranks(np.array([[3.0, 1, 3, 2, 3]])), [[4, 1, 4, 2, 4]])


def test_independent_chains_give_rhat_near_one_and_ess_near_the_draw_count() -> None:
    draws = np.random.default_rng(0).normal(size=(2, 4, 500, 3))
    c = convergence(draws)
    assert c.rhat.shape == c.ess_bulk.shape == (2, 3)
    assert (c.rhat < 1.01).all()
    assert ((c.ess_bulk > 1500) & (c.ess_bulk < 2600)).all()


def test_one_displaced_chain_is_flagged_only_for_its_instrument() -> None:
    draws = np.random.default_rng(1).normal(size=(2, 4, 200, 2))
    draws[1, 0] += 2.0
    c = convergence(draws)
    assert (c.rhat[0] < 1.03).all() and (c.rhat[1] > 1.2).all()


def test_a_chain_with_a_different_spread_is_caught_by_the_folded_rhat() -> None:
    draws = np.random.default_rng(2).normal(size=(1, 4, 500, 1))
    draws[0, 0] *= 4.0  # same centre, so only the folded (tail) R-hat sees it
    assert convergence(draws).rhat[0, 0] > 1.1


def test_autocorrelated_chains_have_a_smaller_ess() -> None:
    rng = np.random.default_rng(3)
    x = np.zeros((1, 4, 2000, 1))
    for t in range(1, 2000):
        x[:, :, t] = 0.9 * x[:, :, t - 1] + rng.normal(size=(1, 4, 1))
    ess = convergence(x).ess_bulk[0, 0]
    assert 100 < ess < 1000  # AR(1) with phi = 0.9: about 8000 * 0.1 / 1.9 = 421


def test_tail_ess_is_near_the_draw_count_for_independent_draws_and_ebfmi_near_one() -> None:
    draws = np.random.default_rng(1).normal(size=(1, 4, 500, 2))
    c = convergence(draws)
    assert ((c.ess_tail > 1200) & (c.ess_tail < 2600)).all()
    white = np.random.default_rng(2).normal(size=(3, 2000))
    assert (np.abs(ebfmi(white) - 2.0) < 0.2).all()  # independent energies: E-BFMI = 2
    walk = np.cumsum(white, axis=1)
    assert (ebfmi(walk) < 0.05).all()  # a random-walk energy explores poorly
