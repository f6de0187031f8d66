"""`fit`'s two samplers: the mode and curvature each chain climbs to, the whitened split
sampler a long near-Gaussian series gets, and the adapted one everything else gets."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from regime_model import fit, laplace, rng
from regime_model.sampler import SamplerConfig
from regime_model.symmetric_eigen import eigh
from regime_model.types import FloatArray, Priors
from service.bench.digest import exact_returns
from service.market.csv_prices import read_prices
from tests.regime_model.test_fit_command import SP500

MEAN = np.array([1.0, -2.0, 0.5])
COV = np.array([[2.0, 0.9, 0.1], [0.9, 1.0, -0.3], [0.1, -0.3, 0.5]])


def gaussian(x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """log N(x | MEAN, COV) + const per lane; -inf where x[0] > 100 (a faulted region)."""
    precision = np.linalg.inv(COV)
    d = x - MEAN
    grad = -(d[:, None, :] * precision[None]).sum(axis=2)
    value = 0.5 * (d * grad).sum(axis=1)
    return np.where(x[:, 0] > 100, -np.inf, value), grad


def sp500_returns(start: str | None = None, end: str | None = None) -> FloatArray:
    bounds = [date.fromisoformat(d) if d else None for d in (start, end)]
    _, closes = read_prices(SP500, "Close", *bounds)
    return np.diff(np.log(np.asarray(closes)))


def test_each_lane_climbs_to_the_mode_and_whitens_to_the_covariance() -> None:
    """A Gaussian's mode is its mean and its curvature the precision. A lane stops once its
    Newton decrement, here (x - mean)' precision (x - mean), is below TOLERANCE; the
    forward-difference Hessian of a linear gradient is exact to rounding (~1e-10 here),
    so 1e-6 on the covariance is loose."""
    starts = np.array([[0.0, 0.0, 0.0], [8.0, -9.0, 5.0], [-30.0, 20.0, 1.0]])
    found = laplace.find_modes(gaussian, starts)
    assert found.converged.all()
    d = found.mode - MEAN
    assert ((d @ np.linalg.inv(COV)) * d).sum(axis=1).max() <= laplace.TOLERANCE
    W = found.whiten
    assert np.abs((W[:, :, None, :] * W[:, None, :, :]).sum(-1) - COV).max() < 1e-6


def test_a_lane_without_a_finite_start_stays_put_with_the_unit_metric() -> None:
    found = laplace.find_modes(gaussian, np.array([[500.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    assert list(found.converged) == [False, True]
    assert np.array_equal(found.mode[0], [500.0, 0.0, 0.0])
    assert np.allclose(np.abs(found.whiten[0]), np.eye(3))


def test_the_whitened_density_is_the_density_at_mode_plus_wz() -> None:
    found = laplace.find_modes(gaussian, np.zeros((2, 3)))
    density = laplace.whitened(gaussian, found)
    z = np.random.default_rng(5).standard_normal((2, 3))
    value, grad = density(z)
    theta = laplace.to_theta(found, z)
    assert np.array_equal(value, gaussian(theta)[0])
    # Whitened by the exact covariance, the Gaussian's gradient in z is -z (to 1e-6, the
    # whitening's own accuracy above).
    assert np.abs(grad + z).max() < 1e-6


def test_the_importance_check_tells_a_gaussian_from_a_skewed_density() -> None:
    stream = rng.make_stream(1, np.zeros(2, np.uint32), np.arange(2, dtype=np.uint32), 0)
    found = laplace.find_modes(gaussian, np.zeros((2, 3)))
    assert laplace.importance_ess(gaussian, found, stream) > 0.999

    def skewed(x: FloatArray) -> tuple[FloatArray, FloatArray]:  # a Gamma(2) in log space
        return 2.0 * x[:, 0] - np.exp(x[:, 0]), (2.0 - np.exp(x[:, :1]))

    found = laplace.find_modes(skewed, np.zeros((2, 1)))
    assert (2.0 * (found.mode - np.log(2.0)) ** 2).max() <= laplace.TOLERANCE  # curvature 2
    assert laplace.importance_ess(skewed, found, stream) < 0.9


def test_jacobi_matches_lapack_to_rounding_and_keeps_a_diagonal_exact() -> None:
    """Jacobi is backward stable: eigenvalues within ~D * eps * |A| of LAPACK's; 1e-13
    relative leaves room for D = 20."""
    rng_ = np.random.default_rng(0)
    for D in (1, 2, 6, 20):
        X = rng_.standard_normal((5, D, D))
        A = X + X.transpose(0, 2, 1)
        values, vectors = eigh(A)
        expect = np.linalg.eigvalsh(A)
        assert np.abs(np.sort(values, axis=1) - expect).max() < 1e-13 * np.abs(expect).max()
        gram = (vectors[:, :, :, None] * vectors[:, :, None, :]).sum(axis=1)
        assert np.abs(gram - np.eye(D)).max() < 1e-13
    diagonal = np.diag([3.0, -1.0, 2.0])[None]
    values, vectors = eigh(diagonal)
    assert np.array_equal(values[0], [3.0, -1.0, 2.0]) and np.array_equal(vectors[0], np.eye(3))


def test_sp500_closes_fit_with_the_split_sampler_within_the_rule_at_the_defaults() -> None:
    """The `fit` defaults on 5,030 daily returns: the Laplace approximation is close
    (importance ESS >= 0.9), one split run meets R-hat <= 1.01 and ESS >= 400 on every
    parameter, its step at most the quarter period. Deterministic: numpy, fixed seed."""
    result = fit.fit_series(sp500_returns(), 2, 20261130, Priors(), SamplerConfig(500, 4))
    assert result.tried == ("split-1",) and result.laplace_ess >= fit.SPLIT_MIN_LAPLACE_ESS
    assert result.rhat.max() <= 1.01 and result.ess_bulk.min() >= 400
    assert (result.sampler.step_size <= fit.QUARTER_PERIOD).all()
    assert result.sampler.gradient_evals < 600  # one gradient per transition


def test_a_skewed_posterior_starts_at_two_split_steps_and_meets_the_rule() -> None:
    """Two years of closes (502 returns): the Laplace approximation is further off, the
    ladder starts at split-2, whose quarter period in two steps still meets the rule."""
    result = fit.fit_series(sp500_returns("2005-01-01", "2006-12-31"), 2, 7, Priors(),
                            SamplerConfig(500, 4))  # fmt: skip
    assert result.laplace_ess < fit.SPLIT_MIN_LAPLACE_ESS and result.tried == ("split-2",)
    assert fit.meets_rule(result) and result.sampler.acceptance.min() > 0.9


def test_the_ladder_starts_where_the_importance_check_and_the_length_say() -> None:
    start = {(ess, n): fit.LADDER[fit.first_rung(ess, n)]
             for ess in (0.05, 0.5, 0.95) for n in (255, 5030)}  # fmt: skip
    assert start == {(0.05, 255): "adapted", (0.5, 255): "adapted", (0.95, 255): "adapted",
                     (0.05, 5030): "adapted", (0.5, 5030): "split-2", (0.95, 5030): "split-1"}


def test_a_window_of_a_quarter_goes_straight_to_the_adapted_sampler() -> None:
    result = fit.fit_series(sp500_returns("2008-08-01", "2008-10-31"), 2, 7, Priors(),
                            SamplerConfig(100, 4), 100)  # fmt: skip
    assert len(result.filtered) < fit.MIN_SPLIT_RETURNS and result.tried == ("adapted",)


def test_a_split_run_that_misses_the_rule_hands_over_to_the_next_sampler() -> None:
    """20 draws per chain cannot bring R-hat to 1.01: each split run is discarded, and the
    adapted sampler's run is reported whatever its diagnostics."""
    returns = exact_returns((3000,), 5)
    result = fit.fit_series(returns, 2, 3, Priors(), SamplerConfig(20, 4), warmup=40)
    assert result.tried == ("split-1", "split-2", "adapted") and not fit.meets_rule(result)
    assert result.warmup == 40 and result.sampler.inv_mass.std() > 0  # the adapted metric


def test_one_sampler_forced_reports_its_run_even_when_it_misses_the_rule() -> None:
    returns = exact_returns((3000,), 5)
    forced = fit.fit_series(returns, 2, 3, Priors(), SamplerConfig(20, 4), samplers=("split-1",))
    assert forced.tried == ("split-1",) and not fit.meets_rule(forced)
    with pytest.raises(ValueError, match="samplers must name"):
        fit.fit_series(returns, 2, 3, Priors(), SamplerConfig(20, 4), samplers=("nuts",))
