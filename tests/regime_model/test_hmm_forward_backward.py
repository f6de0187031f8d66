"""The forward-backward pass, and the forward filter alone (the sampler between bars' pass
over every draw), against obviously correct references."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from regime_model.hmm import (
    forward_backward,
    forward_filter,
    gaussian_log_emissions,
    log_likelihood,
)


def random_hmm(rng: np.random.Generator, K: int) -> tuple[np.ndarray, ...]:
    mu = rng.normal(size=K)
    sigma = np.exp(rng.normal(scale=0.5, size=K))
    P = rng.dirichlet(np.ones(K), size=K)
    init = rng.dirichlet(np.ones(K))
    return mu, sigma, P, init


def path_weights(y: np.ndarray, mu: np.ndarray, sigma: np.ndarray, P: np.ndarray, init: np.ndarray):
    """Joint density p(y, path) of every one of the K^T state paths."""
    K, T = len(mu), len(y)
    dens = np.exp(-0.5 * ((y[:, None] - mu) / sigma) ** 2) / (np.sqrt(2 * np.pi) * sigma)
    for path in itertools.product(range(K), repeat=T):
        w = init[path[0]] * dens[0, path[0]]
        for t in range(1, T):
            w *= P[path[t - 1], path[t]] * dens[t, path[t]]
        yield path, w


def log_space_loop(y, mu, sigma, P, init) -> float:
    """The textbook forward recursion in log space, one bar at a time."""
    log_e = -0.5 * ((y[:, None] - mu) / sigma) ** 2 - np.log(sigma) - 0.5 * np.log(2 * np.pi)
    log_alpha = np.log(init) + log_e[0]
    for t in range(1, len(y)):
        log_alpha = np.logaddexp.reduce(log_alpha[:, None] + np.log(P), axis=0) + log_e[t]
    return float(np.logaddexp.reduce(log_alpha))


@pytest.mark.parametrize(("K", "T"), [(2, 1), (2, 2), (2, 6), (3, 3), (3, 5)])
def test_log_likelihood_equals_the_sum_over_all_state_paths(K: int, T: int) -> None:
    rng = np.random.default_rng(K * 10 + T)
    y = rng.normal(size=T)
    params = random_hmm(rng, K)
    brute = sum(w for _, w in path_weights(y, *params))
    assert log_likelihood(y, *params) == pytest.approx(np.log(brute), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("K", [2, 3])
def test_smoothed_marginals_and_transition_counts_match_enumeration(K: int) -> None:
    rng = np.random.default_rng(K)
    T = 5
    y = rng.normal(size=T)
    mu, sigma, P, init = params = random_hmm(rng, K)
    gamma, xi, total = np.zeros((T, K)), np.zeros((K, K)), 0.0
    for path, w in path_weights(y, *params):
        total += w
        gamma[np.arange(T), path] += w
        for t in range(1, T):
            xi[path[t - 1], path[t]] += w
    post = forward_backward(
        gaussian_log_emissions(y[None], mu[None], np.log(sigma)[None]), P[None], init[None]
    )
    np.testing.assert_allclose(post.smoothed[:, 0].T, gamma / total, rtol=1e-10)
    np.testing.assert_allclose(post.transition_counts[0], xi / total, rtol=1e-10)
    last = np.zeros(K)
    for path, w in path_weights(y, *params):
        last[path[-1]] += w
    np.testing.assert_allclose(post.filtered_last[0], last / total, rtol=1e-10)


def test_batched_pass_equals_one_lane_at_a_time() -> None:
    rng = np.random.default_rng(7)
    L, T, K = 5, 37, 3
    y = rng.normal(size=(L, T))
    lanes = [random_hmm(rng, K) for _ in range(L)]
    mu, sigma, P, init = (np.stack(parts) for parts in zip(*lanes, strict=True))
    batch = forward_backward(gaussian_log_emissions(y, mu, np.log(sigma)), P, init)
    for i in range(L):
        one = forward_backward(
            gaussian_log_emissions(y[i : i + 1], mu[i : i + 1], np.log(sigma[i : i + 1])),
            P[i : i + 1],
            init[i : i + 1],
        )
        np.testing.assert_allclose(batch.log_likelihood[i], one.log_likelihood[0], rtol=1e-13)
        np.testing.assert_allclose(
            batch.smoothed[:, i], one.smoothed[:, 0], rtol=1e-12, atol=1e-300
        )


def ten_thousand_bars(seed: int, outliers_at: list[int]) -> tuple[np.ndarray, ...]:
    """Returns with fat tails and three far outliers (their emissions underflow), and a
    calm and a turbulent state: y, mu, sigma, P."""
    rng = np.random.default_rng(seed)
    T = 10_000
    y = rng.normal(size=T) * np.where(rng.random(T) < 0.05, 4.0, 1.0)
    y[outliers_at] = [40.0, -60.0, 35.0]
    mu, sigma = np.array([0.0, 0.1]), np.array([0.8, 3.0])
    return y, mu, sigma, np.array([[0.99, 0.01], [0.05, 0.95]])


def test_ten_thousand_bars_with_outliers_stay_finite_and_match_log_space() -> None:
    y, mu, sigma, P = ten_thousand_bars(3, [100, 5000, 9999])
    T, init = len(y), np.array([0.5, 0.5])
    post = forward_backward(
        gaussian_log_emissions(y[None], mu[None], np.log(sigma)[None]), P[None], init[None]
    )
    assert np.isfinite(post.log_likelihood).all()
    assert np.isfinite(post.smoothed).all() and np.isfinite(post.transition_counts).all()
    np.testing.assert_allclose(post.smoothed.sum(axis=0), 1.0, rtol=1e-12)
    assert post.transition_counts.sum() == pytest.approx(T - 1, rel=1e-10)
    reference = log_space_loop(y, mu, sigma, P, init)
    assert post.log_likelihood[0] == pytest.approx(reference, rel=1e-11)


def one_filter(y: np.ndarray, mu: np.ndarray, sigma: np.ndarray, P: np.ndarray):
    """forward_filter of one lane: (log p(y), P(x_{T-1} | y)) from a uniform initial state."""
    ll, last = forward_filter(y[None], mu[None], np.log(sigma)[None], P[None])
    return ll[0], last[0]


@pytest.mark.parametrize(("K", "T"), [(2, 1), (2, 6), (3, 5), (4, 3)])
def test_the_forward_filter_gives_the_likelihood_and_last_state_of_every_path(
    K: int, T: int
) -> None:
    rng = np.random.default_rng(K * 100 + T)
    y = rng.normal(size=T)
    mu, sigma, P, _ = random_hmm(rng, K)
    uniform = np.full(K, 1.0 / K)
    total, last = 0.0, np.zeros(K)
    for path, w in path_weights(y, mu, sigma, P, uniform):
        total += w
        last[path[-1]] += w
    ll, filtered = one_filter(y, mu, sigma, P)
    assert ll == pytest.approx(np.log(total), rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(filtered, last / total, rtol=1e-10)


def test_the_forward_filter_reads_a_shared_window_as_a_repeated_one_to_the_bit() -> None:
    """Row r of y serves lanes r * per_row ... (r + 1) * per_row - 1, never copied; over
    more bars than one chunk of emissions (70)."""
    rng = np.random.default_rng(11)
    rows, per_row, K, T = 3, 4, 3, 70
    y = rng.normal(size=(rows, T))
    lanes = [random_hmm(rng, K) for _ in range(rows * per_row)]
    mu, sigma, P, _ = (np.stack(parts) for parts in zip(*lanes, strict=True))
    shared = forward_filter(y, mu, np.log(sigma), P, per_row)
    repeated = forward_filter(np.repeat(y, per_row, axis=0), mu, np.log(sigma), P)
    for a, b in zip(shared, repeated, strict=True):
        assert np.array_equal(a, b)
    post = forward_backward(gaussian_log_emissions(np.repeat(y, per_row, axis=0), mu,
                                                   np.log(sigma)), P,
                            np.full((rows * per_row, K), 1.0 / K))  # fmt: skip
    np.testing.assert_allclose(shared[0], post.log_likelihood, rtol=1e-13)
    np.testing.assert_allclose(shared[1], post.filtered_last, rtol=1e-11, atol=1e-14)


def test_the_forward_filter_over_ten_thousand_bars_with_outliers_matches_log_space() -> None:
    y, mu, sigma, P = ten_thousand_bars(4, [0, 5000, 9999])  # the first bar's too
    ll, last = one_filter(y, mu, sigma, P)
    assert ll == pytest.approx(log_space_loop(y, mu, sigma, P, np.full(2, 0.5)), rel=1e-11)
    assert np.isfinite(last).all() and last.sum() == pytest.approx(1.0, rel=1e-14)
