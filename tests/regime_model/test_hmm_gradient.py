"""The unconstrained log posterior's gradient against central finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from regime_model.params import constrain, n_params
from regime_model.posterior import log_density_and_grad, predictive
from regime_model.types import Priors


@pytest.mark.parametrize("K", [2, 3, 4])
def test_gradient_matches_central_differences_including_priors_and_jacobians(K: int) -> None:
    rng = np.random.default_rng(K)
    L, T, D = 3, 50, n_params(K)
    theta = rng.normal(scale=0.7, size=(L, D))
    y = rng.normal(size=(L, T)) * np.exp(rng.normal(size=(L, T)))
    priors = Priors(mu_scale=0.7, alpha_stay=12.0, alpha_move=1.5)
    _, grad = log_density_and_grad(theta, y, K, priors)
    h = 1e-5
    numeric = np.empty_like(grad)
    for d in range(D):
        step = np.zeros(D)
        step[d] = h
        up, _ = log_density_and_grad(theta + step, y, K, priors)
        down, _ = log_density_and_grad(theta - step, y, K, priors)
        numeric[:, d] = (up - down) / (2 * h)
    err = np.abs(numeric - grad).max(axis=1) / np.abs(grad).max(axis=1)
    assert (err < 1e-6).all(), err


def test_constrained_parameters_are_ordered_and_stochastic() -> None:
    rng = np.random.default_rng(0)
    theta = rng.normal(scale=3.0, size=(20, n_params(4)))
    c = constrain(theta, 4)
    assert (np.diff(c.log_sigma, axis=1) > 0).all()
    np.testing.assert_allclose(np.exp(c.log_trans).sum(axis=2), 1.0, rtol=1e-13)


def test_predictive_moments_are_those_of_the_next_state_mixture() -> None:
    rng = np.random.default_rng(1)
    theta, y = rng.normal(size=(2, n_params(2))), rng.normal(size=(2, 30))
    pred = predictive(theta, y, 2)
    c = constrain(theta, 2)
    w = np.einsum("lk,lkj->lj", pred.filtered_last, np.exp(c.log_trans))
    mean = (w * c.mu).sum(1)
    np.testing.assert_allclose(pred.mean, mean)
    np.testing.assert_allclose(pred.var, (w * (np.exp(2 * c.log_sigma) + c.mu**2)).sum(1) - mean**2)
