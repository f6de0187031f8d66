"""Warm-up adaptation: the robust per-instrument metric and the stranded-chain restart."""

from __future__ import annotations

import numpy as np

from regime_model import adaptation


def _window(draws: np.ndarray) -> adaptation.Welford:
    """A Welford window fed every draw of draws [L, N, D]."""
    L, N, D = draws.shape
    w = adaptation.welford_empty(L, D)
    for n in range(N):
        w = adaptation.welford_add(w, draws[:, n], np.ones(L, dtype=bool))
    return w


def test_a_chain_in_transit_does_not_inflate_its_instruments_metric() -> None:
    rng = np.random.default_rng(0)
    settled = 0.01 * rng.standard_normal((3, 400, 2))
    travelling = np.linspace(-2.0, 0.0, 400)[None, :, None] + settled[:1]
    inv_mass = adaptation.pooled_inv_mass(_window(np.concatenate([settled, travelling])), 4)
    assert inv_mass.shape == (4, 2) and np.allclose(inv_mass, inv_mass[0])
    # Within-chain variance is 1e-4; the pooled variance would be ~0.1.
    assert (inv_mass < 3e-4).all()


def test_only_a_chain_far_below_its_instruments_best_restarts_and_only_from_it() -> None:
    logp = np.array([-10.0, -11.0, -40.0, -12.0, -5.0, -5.5, -6.0, -np.inf])
    donor = adaptation.stranded(logp, 4, np.ones(8, dtype=bool), dim=6)
    assert donor.tolist() == [0, 1, 0, 3, 4, 5, 6, 4]
    unmasked = adaptation.stranded(logp, 4, np.zeros(8, dtype=bool), dim=6)
    assert unmasked.tolist() == list(range(8))


def test_a_warm_lane_never_regroups_and_a_cold_one_only_before_its_last_window() -> None:
    warm = adaptation.lane_schedule(15, False, 300)
    assert not warm.regroup.any()
    cold = adaptation.lane_schedule(300, True, 300)
    windows = adaptation.mass_windows(300)
    expected = [windows[0][0] - 1] + [stop - 1 for _, stop in windows[:-1]]
    assert np.flatnonzero(cold.regroup).tolist() == expected
