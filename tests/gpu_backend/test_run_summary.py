"""The run's summary on the device (regime_model.run_summary, shaders/run_summary.py): per
instrument the numbers estimate_of reads, from the draws where the lane sampler left them.
They are the host's reference arithmetic on the same draws, to float32's precision, ties
of repeated draws included; an instrument the pass does not summarise gets NaN, and the
host then summarises its run."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from wgpu_fixtures import fixture_gpu_device, lane_backend  # noqa: F401 - fixture

from gpu_backend import run_summary as gpu_run_summary
from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.run_summary import DeviceSummary
from gpu_backend.shaders.run_summary import NMAX, NMAX_WIDE
from gpu_backend.wgpu_device import Device
from regime_model import run_summary
from regime_model.blocks import join_chains, take_instruments
from regime_model.diagnostics import bulk_ess
from regime_model.estimate import estimate_of
from regime_model.params import n_params
from regime_model.sampler import SampleResult
from regime_model.update import ModelSpec, build_batch, refresh
from regime_model.width import wide_spec

K, C, S = 2, 4, 30
D = n_params(K)


def _draws_with_ties(n: int, gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """float32-exact draws [n C, S, D] and predictive [n C S, K + 2] as HMC makes them:
    rejections repeat a draw, and P(turbulent) sits at exactly 0 or 1 for whole stretches."""
    L = n * C
    draws = gen.standard_normal((L, S, D)) * [0.1, 0.2, 0.5, 0.3, 2.0, 1.5] - [0, 0, 4, 0, 3, 3]
    repeat = gen.random((L, S)) < 0.3
    for s in range(1, S):  # a rejected transition keeps the chain where it was
        draws[repeat[:, s], s] = draws[repeat[:, s], s - 1]
    p = gen.random((L, S))
    p[: 2 * C] = np.where(gen.random((2 * C, S)) < 0.7, 1.0, p[: 2 * C])  # pinned at 1
    p[2 * C : 3 * C] = 0.0  # every draw agrees: no Monte Carlo error, ESS 0
    p = np.where(repeat, np.roll(p, 1, axis=1), p)
    mean = 1e-3 * gen.standard_normal((L, S))
    var = np.exp(gen.normal(-8, 0.3, (L, S)))
    var = np.where(repeat, np.roll(var, 1, axis=1), var)
    pred = np.stack([1 - p, p, mean, var], axis=-1).reshape(L * S, K + 2)
    return draws.astype(np.float32).astype(np.float64), pred.astype(np.float32).astype(np.float64)


def test_the_device_summary_is_the_hosts_arithmetic_on_the_same_draws(gpu_device: Device) -> None:
    n = 7
    draws, pred = _draws_with_ties(n, np.random.default_rng(5))
    summary = lane_backend(gpu_device, 8).lane_sampler.summary  # type: ignore[union-attr]
    rows = summary.alone(draws, pred, np.arange(0, n * C + 1, C), K)
    got = run_summary.from_rows(rows, K)

    by_instrument = pred.reshape(n, C * S, K + 2)
    turbulent = by_instrument[..., K - 1].reshape(n, C, S)
    log_sd = 0.5 * np.log(by_instrument[..., K + 1]).reshape(n, C, S)
    decision = np.stack([turbulent, log_sd], axis=-1)
    np.testing.assert_allclose(got.regime_probs, by_instrument[..., :K].mean(axis=1), atol=1e-6)
    np.testing.assert_allclose(got.pred_mean, by_instrument[..., K].mean(axis=1), atol=1e-9)
    second = (by_instrument[..., K + 1] + by_instrument[..., K] ** 2).mean(axis=1)
    np.testing.assert_allclose(got.pred_second, second, rtol=1e-5)
    np.testing.assert_allclose(got.spread, decision.reshape(n, -1, 2).std(axis=1),
                               rtol=1e-4, atol=1e-7)  # fmt: skip
    host_ess = bulk_ess(decision)
    assert host_ess[2, 0] == 0 and got.ess[2, 0] == 0  # all draws agree
    np.testing.assert_allclose(got.ess, host_ess, rtol=1e-4)
    np.testing.assert_allclose(got.draw_var, draws.reshape(n, C * S, D).var(axis=1, ddof=1),
                               rtol=1e-4)  # fmt: skip


def test_a_wide_instrument_is_summarised_by_the_wide_pass_over_its_own_lanes(
    gpu_device: Device,
) -> None:
    """A joined batch: two narrow instruments, a wide one of 32 chains (960 pooled draws:
    the wide module's), a narrow one, and one of 72 chains (2,160: more than either module
    sorts, left to the host). Each summarised instrument's row is the host's arithmetic
    over its own lanes."""
    # the wide module, which the daemon runs on a GPU only, here on this adapter
    summary = DeviceSummary(gpu_device.handle, (K,), wide=True)
    assert summary.wide  # lavapipe gives a workgroup 32 KB
    first = np.array([0, C, 2 * C, 2 * C + 32, 3 * C + 32, 3 * C + 104])
    draws, pred = _draws_with_ties(30, np.random.default_rng(6))
    rows = summary.alone(draws[: first[-1]], pred[: first[-1] * S], first, K)
    assert np.isnan(rows[4]).all()
    assert not np.isnan(rows[:4]).any()
    for i in range(4):
        lanes = slice(first[i], first[i + 1])
        by_draw = pred[first[i] * S : first[i + 1] * S]
        chains = first[i + 1] - first[i]
        decision = np.stack([by_draw[:, K - 1].reshape(chains, S),
                             0.5 * np.log(by_draw[:, K + 1]).reshape(chains, S)], axis=-1)
        got = run_summary.from_rows(rows[i : i + 1], K)
        np.testing.assert_allclose(got.ess[0], bulk_ess(decision[None])[0], rtol=1e-4)
        np.testing.assert_allclose(got.spread[0], decision.reshape(-1, 2).std(axis=0),
                                   rtol=1e-4, atol=1e-7)  # fmt: skip
        np.testing.assert_allclose(got.draw_var[0],
                                   draws[lanes].reshape(-1, D).var(axis=0, ddof=1), rtol=1e-4)
    lanes = np.repeat(rows, np.diff(first), axis=0)
    assert run_summary.usable(lanes[: 2 * C], C, K) is not None
    assert run_summary.usable(lanes[2 * C : 2 * C + 32], 32, K) is not None
    assert run_summary.usable(lanes[3 * C + 32 :], 72, K) is None  # the host summarises it


SPEC = ModelSpec(window=64, warmup_cold=150, draws=30)


@pytest.mark.parametrize("wide", [False, True])
def test_a_warm_runs_estimate_from_the_device_summary_is_the_hosts(
    gpu_device: Device, wide: bool
) -> None:
    """The lane sampler's warm run brings its summary, a wide run's (32 chains) too;
    estimate_of's estimate and carries from it are the ones it makes from the run's draws,
    and its gate decides the same."""
    spec = wide_spec(SPEC) if wide else SPEC
    N = 3 if wide else 6
    window = 0.01 * regime_returns(N, spec.window + 1, np.random.default_rng(3))
    keys = np.arange(N)
    _, carries, _ = refresh(window[:, :-1], [None] * N, keys, 1, 5, spec, NumpyBackend(),
                            diagnose="none")  # fmt: skip
    gpu = lane_backend(gpu_device, 8)  # shared with other tests: its summary put back below
    sampler = gpu.lane_sampler
    assert sampler is not None
    own = sampler.summary
    if wide:  # the wide module, which the daemon runs on a GPU only
        sampler.summary = DeviceSummary(gpu_device.handle, (K,), wide=True)
    batch, scale = build_batch(window[:, 1:], carries, keys, 2, 5, spec, 0)
    try:
        result = gpu.run_update(batch)
    finally:
        sampler.summary = own
    assert result.summary is not None and result.summary.shape == (N * spec.chains, 14)
    assert run_summary.usable(result.summary, spec.chains, K) is not None
    device = estimate_of(result, batch.y, scale, spec, gpu, diagnose=False)
    host = estimate_of(result._replace(summary=None), batch.y, scale, spec, gpu, diagnose=False)
    assert np.array_equal(device.estimate.converged, host.estimate.converged)
    for field in ("regime_probs", "pred_mean", "pred_vol", "p_turbulent_sd", "p_turbulent_mcse",
                  "vol_mcse"):  # fmt: skip
        mine, ref = getattr(device.estimate, field), getattr(host.estimate, field)
        np.testing.assert_allclose(mine, ref, rtol=1e-4, atol=1e-7, err_msg=field)
    for mine, ref in zip(device.carries, host.carries, strict=True):
        np.testing.assert_allclose(mine.inv_mass, ref.inv_mass, rtol=1e-4)
        assert np.array_equal(mine.position, ref.position)


def test_a_summary_follows_its_lanes_and_is_dropped_when_chains_are_joined() -> None:
    gen = np.random.default_rng(1)
    n, D_ = 3, 2
    draws = gen.standard_normal((n * C, 4, D_))
    zeros = np.zeros(n * C)
    rows = np.repeat(np.arange(n, dtype=float)[:, None] * np.ones((1, 5)), C, axis=0)
    result = SampleResult(draws, zeros.astype(int), zeros, zeros + 0.1, np.ones((n * C, D_)), 1,
                          {}, np.zeros((n * C, 4)), zeros, zeros, summary=rows)  # fmt: skip
    taken = take_instruments(result, np.array([2, 0]), n)
    assert taken.summary is not None
    assert list(taken.summary[::C, 0]) == [2.0, 0.0]
    assert join_chains(result, result, n).summary is None


def test_the_daemons_narrow_and_wide_runs_fit_the_passes_and_a_joined_block_does_not() -> None:
    """A narrow run's instruments go to the narrow pass, a wide first run's (32 chains) to
    the wide one; a wide instrument that runs on is summarised over its first run's chains
    and its block's joined (64), on the host."""
    spec = ModelSpec()
    pooled = 2 * (spec.draws // 2)
    assert spec.chains * pooled <= NMAX < spec.extension_chains * pooled <= NMAX_WIDE
    assert 2 * spec.extension_chains * pooled > NMAX_WIDE


def test_each_score_table_is_uploaded_once_and_kept_while_counts_alternate(
    gpu_device: Device, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run uploads the score tables of pooled counts not uploaded before: a run like the
    one before uploads none, a run of another draw count its own count's (its bulk ESS is
    the host's), and a first run's count and its run-on blocks' (here: 30 draws, then 20,
    then 30 again) each keep their table, so neither is uploaded again."""
    uploaded: list[set[int]] = []
    write = gpu_run_summary._write

    def noting(*args: Any) -> int:
        uploaded.append(set(args[-1]))
        return write(*args)

    monkeypatch.setattr(gpu_run_summary, "_write", noting)
    N = 3
    window = 0.01 * regime_returns(N, SPEC.window + 1, np.random.default_rng(4))
    keys = np.arange(N)
    narrow = replace(SPEC, extend_max=0)  # every carry of 4 chains
    _, carries, _ = refresh(window[:, :-1], [None] * N, keys, 1, 5, narrow, NumpyBackend(),
                            diagnose="none")  # fmt: skip
    gpu = lane_backend(gpu_device, 8)
    for draws in (30, 30, 20, 30, 20):
        spec = replace(narrow, draws=draws)
        batch, scale = build_batch(window[:, 1:], carries, keys, 2, 5, spec, 0)
        result = gpu.run_update(batch)
        device = run_summary.usable(result.summary, spec.chains, K)
        assert device is not None
        decision = estimate_of(result._replace(summary=None), batch.y, scale, spec, gpu,
                               diagnose=False).decision_draws  # fmt: skip
        np.testing.assert_allclose(device.ess, bulk_ess(decision), rtol=1e-4)
    # 4 chains x 2 halves of 15 and of 10 draws: counts 120 and 80; the first run's upload
    # depends on what the shared backend's earlier runs left
    assert uploaded[1:] == [set(), {80}, set(), set()]
