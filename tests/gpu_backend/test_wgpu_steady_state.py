"""Steady state allocates nothing: object counts, pool and pipelines stay flat, fused
trajectories included."""

from __future__ import annotations

import numpy as np
import wgpu
from wgpu_fixtures import fixture_gpu_device, fixture_wgpu_backend  # noqa: F401 - fixtures

from gpu_backend.wgpu_backend import WgpuBackend
from regime_model.types import Priors


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def test_a_thousand_calls_create_no_wgpu_objects(wgpu_backend: WgpuBackend) -> None:
    rng = np.random.default_rng(5)
    theta, y = 0.3 * rng.normal(size=(8, 6)), rng.normal(size=(8, 32))
    eps, ones, steps = np.full(8, 0.05), np.ones((8, 6)), np.arange(8) % 3 + 1
    calls = [
        lambda: wgpu_backend.hmm_value_and_grad(theta, y, 2, Priors()),
        lambda: wgpu_backend.hmm_predictive(theta, y, 2),
        lambda: wgpu_backend.leapfrog(theta, ones, ones, eps, ones, steps, y, 2, Priors()),
    ]
    for call in calls:
        call()
    kernels = wgpu_backend.kernels
    before = wgpu.diagnostics.object_counts.get_dict()
    lf_compiled = wgpu_backend.trajectories.cache.compiled
    created, compiled, rss = kernels.pool.created, kernels.cache.compiled, _rss_bytes()
    for i in range(999):
        calls[i % 3]()
    after = wgpu.diagnostics.object_counts.get_dict()
    for kind in ("Buffer", "BindGroup", "ComputePipeline", "ShaderModule", "QuerySet"):
        assert after[kind]["count"] == before[kind]["count"], kind
    assert (kernels.pool.created, kernels.cache.compiled) == (created, compiled)
    assert wgpu_backend.trajectories.cache.compiled == lf_compiled
    assert _rss_bytes() - rss < 16 << 20


def test_a_larger_batch_grows_the_pool_once(wgpu_backend: WgpuBackend) -> None:
    rng = np.random.default_rng(6)
    theta, y = 0.3 * rng.normal(size=(300, 6)), rng.normal(size=(300, 64))
    wgpu_backend.hmm_value_and_grad(theta, y, 2, Priors())
    created = wgpu_backend.kernels.pool.created
    for n in (300, 200, 257, 1):
        wgpu_backend.hmm_value_and_grad(theta[:n], y[:n], 2, Priors())
    assert wgpu_backend.kernels.pool.created == created
