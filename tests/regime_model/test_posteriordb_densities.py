"""The ported posteriordb log densities: exact gradients, and the Stan models' meaning."""

from __future__ import annotations

from math import lgamma, log, pi

import numpy as np
import pytest

from regime_model.hmm import log_likelihood
from regime_model.validation.posteriordb import TARGETS, ark, arma11, garch11, recurrence
from service.bench.validate_data import data_block, reference, target


def central_differences(fn, theta: np.ndarray, h: float = 1e-6) -> np.ndarray:
    numeric = np.empty_like(theta)
    for d in range(theta.shape[1]):
        step = np.zeros(theta.shape[1])
        step[d] = h
        numeric[:, d] = (fn(theta + step)[0] - fn(theta - step)[0]) / (2 * h)
    return numeric


def reference_point(posterior: str, rng: np.random.Generator, lanes: int) -> np.ndarray:
    """Unconstrained points near the posterior: the sampler's territory, where FD is sharp."""
    t = target(posterior)
    return rng.normal(scale=0.3, size=(lanes, t.dim)) + _centre(posterior)


def _centre(posterior: str) -> np.ndarray:
    ref = {k: v["mean"] for k, v in reference(posterior).items()}
    if posterior == "garch-garch11":
        a1 = ref["alpha1"]
        return np.array(
            [
                ref["mu"],
                np.log(ref["alpha0"]),
                np.log(a1 / (1 - a1)),
                np.log(ref["beta1"] / (1 - a1 - ref["beta1"])),
            ]
        )
    if posterior.startswith(("arK", "arma")):
        names = list(ref)
        return np.array([ref[n] if n != "sigma" else np.log(ref[n]) for n in names])
    return np.zeros(target(posterior).dim)


@pytest.mark.parametrize("posterior", sorted(TARGETS))
def test_gradient_matches_central_differences(posterior: str) -> None:
    theta = reference_point(posterior, np.random.default_rng(1), 3)
    fn = target(posterior).logdensity
    value, grad = fn(theta)
    assert np.isfinite(value).all()
    numeric = central_differences(fn, theta)
    err = np.abs(numeric - grad).max(axis=1) / np.abs(grad).max(axis=1)
    assert (err < 1e-6).all(), err


@pytest.mark.parametrize("posterior", sorted(TARGETS))
def test_batched_lanes_equal_lanes_one_at_a_time(posterior: str) -> None:
    theta = reference_point(posterior, np.random.default_rng(2), 4)
    fn = target(posterior).logdensity
    value, grad = fn(theta)
    for i in range(4):
        v, g = fn(theta[i : i + 1])
        np.testing.assert_allclose(v, value[i : i + 1], rtol=1e-12)
        np.testing.assert_allclose(g, grad[i : i + 1], rtol=1e-10, atol=1e-12)


def test_linear_recurrence_matches_the_loop() -> None:
    rng = np.random.default_rng(3)
    c, d = rng.uniform(-1.2, 1.2, size=3), rng.normal(size=(3, 37))
    x, acc = np.empty_like(d), np.zeros(3)
    for t in range(37):
        acc = c * acc + d[:, t]
        x[:, t] = acc
    np.testing.assert_allclose(recurrence.forward(c, d), x, rtol=1e-12)


def test_hmm_example_likelihood_is_the_forward_algorithm_of_the_stan_model() -> None:
    """Stan's gamma_1 = emissions has no initial distribution: ours with init 1/K, plus log K."""
    y = np.asarray(data_block("hmm_example-hmm_example")["y"])
    theta = np.array([[np.log(3.0), np.log(6.0), -1.0, -2.0]])
    named = TARGETS["hmm_example-hmm_example"](data_block("hmm_example-hmm_example")).constrain(
        theta
    )
    P = np.array(
        [
            [named["theta1[1]"][0], named["theta1[2]"][0]],
            [named["theta2[1]"][0], named["theta2[2]"][0]],
        ]
    )
    mu = np.array([named["mu[1]"][0], named["mu[2]"][0]])
    loglik = log_likelihood(y, mu, np.ones(2), P, np.full(2, 0.5)) + np.log(2)
    prior = -0.5 * ((mu - [3.0, 10.0]) ** 2).sum() - np.log(2 * np.pi)
    jacobian = theta[0, 0] + theta[0, 1] + np.log(P).sum()  # positive_ordered + simplex rows
    value, _ = target("hmm_example-hmm_example").logdensity(theta)
    np.testing.assert_allclose(value[0], loglik + prior + jacobian, rtol=1e-12)


def test_garch_variance_path_is_the_stan_loop() -> None:
    y = np.asarray(data_block("garch-garch11")["y"])
    mu, alpha0, alpha1, beta1 = 5.0, 0.5, 0.3, 0.4
    sigma2 = [0.5**2]
    for t in range(1, len(y)):
        sigma2.append(alpha0 + alpha1 * (y[t - 1] - mu) ** 2 + beta1 * sigma2[-1])
    s2 = np.array(sigma2)
    loglik = (-0.5 * np.log(2 * np.pi * s2) - 0.5 * (y - mu) ** 2 / s2).sum()
    theta = np.array(
        [[mu, np.log(alpha0), np.log(alpha1 / (1 - alpha1)), np.log(beta1 / (1 - alpha1 - beta1))]]
    )
    jac = np.log(alpha0) + np.log(alpha1 * (1 - alpha1)) + np.log(1 - alpha1)
    jac += np.log(beta1 / (1 - alpha1) * (1 - beta1 / (1 - alpha1)))
    value, _ = garch11.logdensity(y, 0.5)(theta)
    np.testing.assert_allclose(value[0], loglik + jac, rtol=1e-12)


def test_arma_errors_are_the_stan_loop() -> None:
    y = np.asarray(data_block("arma-arma11")["y"])
    mu, phi, ma, sigma = 0.1, 0.8, -0.3, 0.5
    err = [y[0] - (mu + phi * mu)]
    for t in range(1, len(y)):
        err.append(y[t] - (mu + phi * y[t - 1] + ma * err[-1]))
    e = np.array(err)
    loglik = (-0.5 * np.log(2 * np.pi * sigma**2) - 0.5 * e**2 / sigma**2).sum()
    prior = -0.5 * (mu / 10) ** 2 - 0.5 * (phi**2 + ma**2) / 4 - np.log1p((sigma / 2.5) ** 2)
    value, _ = arma11.logdensity(y)(np.array([[mu, phi, ma, np.log(sigma)]]))
    # Up to the priors' normalising constants; + log sigma is the Jacobian of sigma = exp(u).
    np.testing.assert_allclose(value[0], loglik + prior + np.log(sigma), rtol=1e-12)


def test_ark_design_lags_each_column_by_its_order() -> None:
    y = np.arange(10.0)
    X = ark.design(y, 3)
    np.testing.assert_array_equal(X[0], [1.0, 2.0, 1.0, 0.0])
    assert X.shape == (7, 4)


def test_hmm_drive_1_is_the_stan_model_with_its_jacobian() -> None:
    """The Stan program transcribed loop by loop (Dirichlet rows with their constants,
    ordered phi and lambda, forward algorithm from gamma_1 = emissions) plus the log
    |det| of a numerically differentiated map theta -> (phi, lambda, P01, P10): equal to
    our value up to one constant at points near and far from the posterior."""
    posterior = "bball_drive_event_1-hmm_drive_1"
    d = data_block(posterior)
    u, v = np.asarray(d["u"], float), np.asarray(d["v"], float)
    alpha, tau, rho = np.asarray(d["alpha"], float), float(d["tau"]), float(d["rho"])
    t = target(posterior)

    def npdf(x: np.ndarray, m: float, s: float) -> np.ndarray:
        return -0.5 * ((x - m) / s) ** 2 - log(s) - 0.5 * log(2 * pi)

    def free(th: np.ndarray) -> np.ndarray:
        named = t.constrain(th)
        keys = ("phi[1]", "phi[2]", "lambda[1]", "lambda[2]", "theta1[2]", "theta2[1]")
        return np.array([named[k] for k in keys])

    def stan_lp(th: np.ndarray) -> float:
        phi, lam, p01, p10 = free(th)[:2], free(th)[2:4], free(th)[4], free(th)[5]
        P = np.array([[1 - p01, p01], [p10, 1 - p10]])
        lp = sum(
            lgamma(alpha[k].sum())
            - sum(lgamma(a) for a in alpha[k])
            + ((alpha[k] - 1) * np.log(P[k])).sum()
            for k in range(2)
        )
        lp += npdf(phi, np.array([0.0, 3.0]), 1.0).sum()
        lp += npdf(lam, np.array([0.0, 3.0]), 1.0).sum()
        emis = npdf(u[:, None], phi, tau) + npdf(v[:, None], lam, rho)  # [N, K]
        gamma = emis[0]
        for n in range(1, len(u)):
            gamma = np.logaddexp.reduce(gamma[:, None] + np.log(P) + emis[n][None, :], axis=0)
        return float(lp + np.logaddexp.reduce(gamma))

    def log_jacobian(th: np.ndarray, h: float = 1e-6) -> float:
        J = np.column_stack([(free(th + e) - free(th - e)) / (2 * h) for e in h * np.eye(6)])
        return float(np.linalg.slogdet(J)[1])

    rng = np.random.default_rng(4)
    centre = np.array([-2.34, np.log(1.6), 2.43, np.log(1.11), np.log(0.034 / 0.966), -4.7])
    points = np.array([centre + rng.normal(scale=s, size=6) for s in (0.0, 0.05, 0.5, 2.0)])
    ours, _ = t.logdensity(points)
    brute = np.array([stan_lp(th) + log_jacobian(th) for th in points])
    # The constant is the Dirichlet normalisers, which our density drops.
    np.testing.assert_allclose(ours - brute, -2 * np.log(20.0), rtol=0, atol=1e-6)
