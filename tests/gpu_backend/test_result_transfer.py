"""A served run's result crosses from the device process to the worker in fewer bytes
(gpu_backend/result_transfer.py) and arrives as the same bits."""

from __future__ import annotations

import pickle

import numpy as np
from wgpu_fixtures import fixture_gpu_device  # noqa: F401 - fixture

from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.result_transfer import compact, expand
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device
from regime_model.sampler import SampleResult
from regime_model.update import ModelSpec, build_batch, refresh

SPEC = ModelSpec(window=32, warmup_cold=60, warmup_warm=3, draws=6, extend_max=0)


def _warm_run(backend: object) -> SampleResult:
    returns = 0.01 * regime_returns(3, SPEC.window + 1, np.random.default_rng(9))
    keys = np.arange(3)
    _, carries, _ = refresh(returns[:, :-1], [None] * 3, keys, 1, 2, SPEC, NumpyBackend(),
                            diagnose="none")  # fmt: skip
    batch = build_batch(returns[:, 1:], carries, keys, 2, 2, SPEC)[0]
    return backend.run_update(batch)  # type: ignore[attr-defined, no-any-return]


def _same(a: SampleResult, b: SampleResult) -> None:
    for name in ("draws", "energy", "step_size", "acceptance"):
        got, want = getattr(a, name), getattr(b, name)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    if b.predictive is not None:
        assert a.predictive is not None
        for got, want in zip(a.predictive, b.predictive, strict=True):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_a_device_run_travels_as_float32_and_arrives_as_its_own_bits(gpu_device: Device) -> None:
    run = _warm_run(WgpuBackend(gpu_device))
    sent = compact(run)
    assert sent.draws.dtype == np.float32
    assert len(pickle.dumps(sent, protocol=5)) < 0.75 * len(pickle.dumps(run, protocol=5))
    _same(expand(pickle.loads(pickle.dumps(sent, protocol=5))), run)


def test_a_float64_run_travels_as_it_is() -> None:
    run = _warm_run(NumpyBackend())  # the host driver's float64 draws
    sent = compact(run)
    assert sent.draws.dtype == np.float64
    _same(expand(sent), run)
