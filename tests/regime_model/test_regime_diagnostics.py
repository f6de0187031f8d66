"""Rank-normalised split R-hat and bulk ESS on chains with known behaviour."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

from regime_model.diagnostics import (
    average_ranks,
    bulk_ess,
    convergence,
    ebfmi,
    normal_quantile,
    rank_rhat,
)


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


def test_quantiles_and_scores_from_one_sort_equal_numpys_to_the_bit() -> None:
    """convergence() sorts each parameter's draws once and reads the median, the tail
    quantiles and the rank scores from that sort: the same bits as numpy's own functions
    (the update's golden digest depends on them)."""
    from regime_model.diagnostics import _scores, _sorted_median, _sorted_quantile  # noqa: PLC0415

    rng = np.random.default_rng(4)
    for n in (7, 20, 160, 161):
        x = np.round(rng.normal(size=(5, n)), 1)  # rounded: ties, as rejections give
        v = np.sort(x, axis=-1)
        assert np.array_equal(_sorted_median(v), np.median(x, axis=-1))
        for q in (0.05, 0.5, 0.95):
            assert np.array_equal(_sorted_quantile(v, q), np.quantile(x, q, axis=-1))
        ranks = average_ranks(x)
        direct = normal_quantile((ranks - 0.375) / (n + 0.25))
        assert np.array_equal(_scores(n)[(2 * ranks).astype(int) - 2], direct)


def test_instruments_are_diagnosed_independently_of_the_batch_they_are_in() -> None:
    draws = np.random.default_rng(5).normal(size=(6, 4, 40, 3))
    whole = convergence(draws)
    for i in (0, 5):
        alone = convergence(draws[i : i + 1])
        for field_whole, field_alone in zip(whole, alone, strict=True):
            np.testing.assert_allclose(field_whole[i], field_alone[0], rtol=1e-12)


def test_the_bulk_ess_and_the_rhat_alone_are_the_same_bits_as_together() -> None:
    """The gate reads the bulk ESS alone on the update's critical path and the R-hat comes
    later (deferred_diagnostics): each alone is what convergence() gives, on ties, a slowly
    mixing instrument and a constant one."""
    gen = np.random.default_rng(12)
    draws = gen.uniform(size=(7, 4, 40, 2))
    draws[:, :, 1::4] = draws[:, :, 0:-1:4]
    draws[2] = np.cumsum(draws[2], axis=1)
    draws[5] = 1.0  # pinned: R-hat infinite, ESS 0
    full = convergence(draws)
    assert np.array_equal(bulk_ess(draws), full.ess_bulk)
    assert np.array_equal(rank_rhat(draws), full.rhat)
    assert np.isinf(rank_rhat(draws)[5]).all() and (bulk_ess(draws)[5] == 0).all()


def test_antithetic_short_chains_are_credited_no_more_draws_than_they_have() -> None:
    """x_t = -0.5 x_(t-1) + e has a true ESS of three times its draws; from the daemon's
    4 chains x 40 draws the bulk ESS is capped at the 160 draws there are."""
    rng = np.random.default_rng(4)
    x = np.zeros((1, 4, 40, 1))
    x[:, :, 0] = rng.normal(size=(1, 4, 1))
    for t in range(1, 40):
        x[:, :, t] = -0.5 * x[:, :, t - 1] + rng.normal(size=(1, 4, 1))
    assert bulk_ess(x)[0, 0] == 160.0
    assert convergence(x).ess_bulk[0, 0] == 160.0
