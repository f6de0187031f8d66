"""An update's draws reweighted to the next window (regime_model.reweigh): importance
weights from the draws' densities on both windows, the estimate their weighted means,
and the bar's own sampler where the weights cannot serve."""

from __future__ import annotations

import numpy as np
import pytest

from gpu_backend import NumpyBackend
from regime_model.batches import prior_centre
from regime_model.estimate import RegimeEstimate
from regime_model.params import log_prior, log_prior_value, moved_prior_change, n_params
from regime_model.posterior import log_density_and_grad, predictive
from regime_model.reweigh import MAX_SHIFT, MIN_SHARE, reweigh, shifts
from regime_model.sample import sample_of
from regime_model.scaling import robust_scale
from regime_model.update import ModelSpec, refresh
from tests.regime_model.regime_data import two_regime_returns

BACKEND = NumpyBackend()
SPEC = ModelSpec(window=128, warmup_cold=150, warmup_warm=10, draws=20)


@pytest.fixture(scope="module")
def sampled() -> tuple[np.ndarray, object]:
    """Three instruments' returns (131 bars) and the sample of their first window."""
    returns, _ = two_regime_returns(3, 131, seed=3)
    keys = np.arange(3, dtype=np.uint32) + 10
    estimate, _, info = refresh(returns[:, :128], [None] * 3, keys, 1, 7, SPEC, BACKEND)
    return returns, sample_of(returns[:, :128], estimate, info.draws or [], SPEC, BACKEND)


@pytest.mark.parametrize("bars_on", [1, 2])
def test_each_draw_weighs_its_density_on_the_new_window_over_the_old(sampled, bars_on) -> None:
    """One bar on, by a step from the filter the sample left (regime_model.next_bar); two,
    by a pass over the new window: both the definition, to float64's rounding."""
    returns, sample = sampled
    now = returns[:, bars_on : 128 + bars_on]
    got = reweigh(sample, np.arange(3), now, SPEC, BACKEND)
    assert not got.at_bar.any()
    for i in range(3):
        old, new = returns[i, :128], now[i]
        s_old, s_new = robust_scale(old[None])[0], robust_scale(new[None])[0]
        theta = sample.draws[i].copy()  # moved into the new window's scaled units
        theta[:, :2] *= s_old / s_new
        theta[:, 2] += np.log(s_old / s_new)
        y_new = np.broadcast_to(new / s_new, (len(theta), 128))
        y_old = np.broadcast_to(old / s_old, (len(theta), 128))
        lw = (log_density_and_grad(theta, y_new, 2, SPEC.priors)[0]
              - log_density_and_grad(sample.draws[i], y_old, 2, SPEC.priors)[0])  # fmt: skip
        w = np.exp(lw - lw.max())
        w /= w.sum()
        pred = predictive(theta, y_new, 2)
        np.testing.assert_allclose(got.estimate.regime_probs[i], w @ pred.filtered_last,
                                   rtol=1e-12)  # fmt: skip
        np.testing.assert_allclose(got.estimate.pred_mean[i], (w @ pred.mean) * s_new,
                                   rtol=1e-12, atol=1e-12 * s_new)  # a mean near 0: cancels
        assert got.share[i] == pytest.approx(1.0 / (len(w) * (w @ w)))


def test_one_bar_on_the_step_gives_every_field_the_whole_windows_pass_gives(sampled) -> None:
    returns, sample = sampled
    now = returns[:, 1:129]
    stepped = reweigh(sample, np.arange(3), now, SPEC, BACKEND)
    passed = reweigh(sample._replace(ahead=[None] * 3), np.arange(3), now, SPEC, BACKEND)
    for field in ("regime_probs", "pred_mean", "pred_vol", "p_turbulent_sd",
                  "p_turbulent_mcse", "vol_mcse"):  # fmt: skip
        np.testing.assert_allclose(getattr(stepped.estimate, field),
                                   getattr(passed.estimate, field), rtol=1e-11)  # fmt: skip
    np.testing.assert_allclose(stepped.share, passed.share, rtol=1e-11)
    assert np.array_equal(stepped.estimate.converged, passed.estimate.converged)


@pytest.mark.parametrize("K", [3, 4])
def test_the_step_is_the_pass_for_every_number_of_regimes(K: int) -> None:
    """Draws spread about the priors' centre (two draw counts: two groups), one bar on."""
    gen = np.random.default_rng(K)
    spec = ModelSpec(n_states=K, window=64, draws=20)
    returns, _ = two_regime_returns(4, 65, seed=K)
    draws = [prior_centre(K, spec.priors)[None] + 0.2 * gen.standard_normal((m, n_params(K)))
             for m in (40, 40, 80, 40)]  # fmt: skip
    fields = {k: np.zeros(4) for k in RegimeEstimate._fields}
    fields.update(regime_probs=np.full((4, K), 1.0 / K), converged=np.ones(4, dtype=bool),
                  divergences=np.zeros(4, dtype=np.int64))  # fmt: skip
    sample = sample_of(returns[:, :64], RegimeEstimate(**fields), draws, spec, BACKEND)
    now = returns[:, 1:]
    stepped = reweigh(sample, np.arange(4), now, spec, BACKEND)
    passed = reweigh(sample._replace(ahead=[None] * 4), np.arange(4), now, spec, BACKEND)
    for field in ("regime_probs", "pred_mean", "pred_vol", "p_turbulent_sd"):
        np.testing.assert_allclose(getattr(stepped.estimate, field),
                                   getattr(passed.estimate, field), rtol=1e-11)  # fmt: skip
    np.testing.assert_allclose(stepped.share, passed.share, rtol=1e-11)


def test_a_window_moved_by_whole_bars_is_found_and_any_other_is_not() -> None:
    before = np.arange(40.0).reshape(2, 20)
    now = np.concatenate([before[:, 3:], np.zeros((2, 3))], axis=1)  # three bars on
    now[1, 5] = -1.0  # the second's history revised
    assert shifts(before, now).tolist() == [3, 0]
    far = np.concatenate([before[:, MAX_SHIFT + 1 :], np.zeros((2, MAX_SHIFT + 1))], axis=1)
    assert shifts(before, far).tolist() == [0, 0]
    assert shifts(before, before).tolist() == [0, 0]  # not moved: nothing new to weigh


def test_the_bar_samples_where_the_weights_keep_too_few_draws_or_there_is_no_sample(
    sampled,
) -> None:
    returns, sample = sampled
    now = returns[:, 1:129].copy()
    now[0, -1] = 60 * robust_scale(now[:1])[0]  # a bar no draw saw coming
    got = reweigh(sample, np.array([0, 1, -1]), now, SPEC, BACKEND)
    assert got.share[0] < MIN_SHARE and got.at_bar[0]
    assert not got.at_bar[1] and got.at_bar[2] and np.isnan(got.share[2])
    assert got.why == {"no_draws": 1, "not_moved": 0, "weights": 1, "gate": 0}



def test_a_sample_with_rows_sampled_again_takes_theirs_and_keeps_the_rest(sampled) -> None:
    returns, sample = sampled
    again = refresh(returns[[2, 0], :128], [None] * 2, np.array([12, 10], dtype=np.uint32), 1,
                    8, SPEC, BACKEND)  # fmt: skip: other seeds, other draws
    part = sample_of(returns[[2, 0], :128], again[0], again[2].draws or [], SPEC, BACKEND)
    got = sample.with_rows(np.array([2, 0]), part)
    for i, j in ((2, 0), (0, 1)):
        assert got.draws[i] is part.draws[j] and got.log_density[i] is part.log_density[j]
        assert got.ahead[i] is part.ahead[j] and np.array_equal(got.ess[i], part.ess[j])
        assert got.estimate.pred_vol[i] == part.estimate.pred_vol[j]
    assert got.draws[1] is sample.draws[1] and np.array_equal(got.ess[1], sample.ess[1])
    assert got.estimate.pred_vol[1] == sample.estimate.pred_vol[1]
    assert not np.array_equal(got.draws[0], sample.draws[0])  # the check can fail
    assert got.returns is sample.returns


def test_a_quantity_the_same_in_every_draw_is_weighed_by_the_others_ess() -> None:
    """Draws whose calm regime (sigma_0 a thousandth of the window's scale) cannot have
    made any of its bars: P(turbulent) is exactly 1 in every draw, so it has no ESS
    (bulk_ess gives 0), while the predictive sd varies with sigma_1. The sample takes the
    predictive sd's ESS for it: counted as one draw, the reweighting, which a calm next
    bar spreads, failed the gate and went to the bar's sampler every time."""
    rng = np.random.default_rng(5)
    returns = rng.normal(0.0, 0.02, size=(1, 128))
    M = SPEC.chains * SPEC.draws
    theta = np.zeros((M, n_params(2)))
    theta[:, 2] = np.log(1e-3)  # log sigma_0, in the window's robust-scaled units
    theta[:, 3] = rng.uniform(6.5, 7.5, size=M)  # sigma_1 = sigma_0 (1 + exp(eta))
    theta[:, 4:] = -3.0  # sticky rows
    estimate, _, _ = refresh(returns, [None], np.array([3], dtype=np.uint32), 1, 7, SPEC,
                             BACKEND)  # fmt: skip: any estimate of one instrument
    sample = sample_of(returns, estimate, [theta], SPEC, BACKEND)
    assert np.all(np.isfinite(sample.ess)) and sample.ess[0, 0] == sample.ess[0, 1] > 10


@pytest.mark.parametrize("K", [2, 3, 4])
def test_the_prior_read_without_its_gradient_is_the_samplers_to_rounding(K: int) -> None:
    """Reweighing reads the log prior's value alone (log_prior_value, the Dirichlet rows
    in closed form): the value the sampler's log_prior computes beside its gradient, to
    float64's rounding, and finite where a row's logits are far out either way."""
    theta = np.random.default_rng(K).normal(size=(500, n_params(K))) * 2.0
    theta[:3, 2 * K :], theta[3:6, 2 * K :] = 700.0, -700.0
    priors = ModelSpec().priors
    got, want = log_prior_value(theta, K, priors), log_prior(theta, K, priors)[0]
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)


@pytest.mark.parametrize("K", [2, 3, 4])
def test_a_moved_draws_prior_changes_by_its_means_and_first_scale_alone(K: int) -> None:
    """moved_prior_change: the prior of a draw moved into another window's units (means
    times r, log sigma_0 plus log r) less its own, as the whole prior evaluated twice."""
    gen = np.random.default_rng(K)
    theta = gen.normal(size=(500, n_params(K))) * 2.0
    log_ratio = gen.normal(size=500) * 0.3
    moved = theta.copy()
    moved[:, :K] *= np.exp(log_ratio)[:, None]
    moved[:, K] += log_ratio
    priors = ModelSpec().priors
    want = log_prior_value(moved, K, priors) - log_prior_value(theta, K, priors)
    got = moved_prior_change(theta[:, :K].T, theta[:, K], log_ratio, priors)
    np.testing.assert_allclose(got, want,
                               rtol=1e-9, atol=1e-10)  # fmt: skip
