"""The bar's reweighing on a GPU backend (regime_model.reweigh): one bar on, the filter the
sample left between bars is finished on the host, with no device call on the bar's path
(on the H200 the bar's pass took 13.7-15.2 ms of a trial account's update); further on,
one pass over the new windows. Either way the estimate is numpy's to float32's error."""

from __future__ import annotations

import numpy as np
import pytest
from wgpu_fixtures import fixture_gpu_device  # noqa: F401 - fixture

from gpu_backend.backend_traffic import take_traffic
from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device
from regime_model.batches import prior_centre
from regime_model.estimate import RegimeEstimate
from regime_model.reweigh import reweigh
from regime_model.sample import sample_of
from regime_model.update import ModelSpec

SPEC = ModelSpec(window=64)
SIZES = [40, 40, 80]  # two draw counts: two groups


def _sample(backend: object, returns: np.ndarray):  # type: ignore[no-untyped-def]
    gen = np.random.default_rng(5)
    draws = [prior_centre(2, SPEC.priors)[None] + 0.1 * gen.standard_normal((m, 6))
             for m in SIZES]  # fmt: skip
    N = len(SIZES)
    fields = {k: np.zeros(N) for k in RegimeEstimate._fields}
    fields.update(regime_probs=np.full((N, 2), 0.5), converged=np.ones(N, dtype=bool),
                  divergences=np.zeros(N, dtype=np.int64))  # fmt: skip
    return sample_of(returns[:, :64], RegimeEstimate(**fields), draws, SPEC, backend)  # type: ignore[arg-type]


@pytest.mark.parametrize("bars_on, submitted", [(1, False), (3, True)])
def test_one_bar_on_the_bar_reweighs_without_the_device(
    gpu_device: Device, bars_on: int, submitted: bool
) -> None:
    returns = regime_returns(len(SIZES), 70, np.random.default_rng(8))
    gpu, cpu = WgpuBackend(gpu_device), NumpyBackend()
    on_gpu, on_cpu = _sample(gpu, returns), _sample(cpu, returns)
    take_traffic(gpu)  # the sample's passes, between bars
    now = returns[:, bars_on : 64 + bars_on]
    got = reweigh(on_gpu, np.arange(len(SIZES)), now, SPEC, gpu)
    assert (take_traffic(gpu).submissions > 0) is submitted
    want = reweigh(on_cpu, np.arange(len(SIZES)), now, SPEC, cpu)
    np.testing.assert_allclose(got.estimate.regime_probs, want.estimate.regime_probs, atol=2e-4)
    np.testing.assert_allclose(got.share, want.share, rtol=2e-3)
