"""Backend registry and the numpy reference backend."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from gpu_backend import NumpyBackend, select_backend
from regime_model.hmc import host_leapfrog
from regime_model.posterior import log_density_and_grad
from regime_model.types import Priors


def test_numpy_and_auto_select_the_float64_reference() -> None:
    for name in ("numpy", "auto"):
        backend = select_backend(name)
        assert (backend.name, backend.adapter, backend.numerics) == ("numpy", "cpu", "float64")


def test_an_unknown_backend_names_the_valid_choices() -> None:
    with pytest.raises(ValueError, match=r"'cuda'.*auto, numpy"):
        select_backend("cuda")


def test_numpy_backend_delegates_to_the_model_functions() -> None:
    rng = np.random.default_rng(0)
    theta, y = rng.normal(size=(3, 6)), rng.normal(size=(3, 20))
    logp, grad = NumpyBackend().hmm_value_and_grad(theta, y, 2, Priors())
    ref_logp, ref_grad = log_density_and_grad(theta, y, 2, Priors())
    np.testing.assert_array_equal(logp, ref_logp)
    np.testing.assert_array_equal(grad, ref_grad)
    pred = NumpyBackend().hmm_predictive(theta, y, 2)
    assert pred.filtered_last.shape == (3, 2) and (pred.var > 0).all()


def test_numpy_trajectory_is_the_host_loop_bit_for_bit() -> None:
    rng = np.random.default_rng(1)
    theta, y = 0.3 * rng.normal(size=(4, 6)), rng.normal(size=(4, 30))
    fn = partial(NumpyBackend().hmm_value_and_grad, y=y, n_states=2, priors=Priors())
    _, grad = fn(theta)
    args = (theta, rng.normal(size=(4, 6)), grad, np.full(4, 0.05), np.ones((4, 6)))
    steps = np.array([1, 3, 2, 4])
    out = NumpyBackend().leapfrog(*args, steps, y, 2, Priors())
    for a, b in zip(out, host_leapfrog(fn, *args, steps), strict=True):
        np.testing.assert_array_equal(a, b)
