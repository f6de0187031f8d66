"""A workgroup per lane: the scan kernels and the one-dispatch warm update.

On a GPU these are the default (gpu_backend.lane_threads.LANE_THREADS); lavapipe runs
its HMM kernels a thread per lane and the lane sampler at its subgroup's 8 threads by
default, so here the backends ask for lane threads explicitly, with counts that leave
chunks of one bar, several bars and none (more threads than bars).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from wgpu_fixtures import (  # noqa: F401 - fixture
    fixture_gpu_device,
    lane_backend,
    run_twice_in_steady_state,
    summer_2008,
)

from gpu_backend.buffer_pool import MIN_CAPACITY
from gpu_backend.identity import regime_returns
from gpu_backend.lane_threads import LANE_THREADS, threads_per_lane
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.sampler_agreement import compare_draw_phase, compare_warm_samplers
from gpu_backend.shaders.hmm_scan import TMAX, lane_threads_for, window_capacity, workgroup_bytes
from gpu_backend.shaders.lane_sampler import (
    LLVMPIPE_LOOP_LIMIT,
    dispatch_starts,
    gradient_budget,
    lane_sampler_source,
)
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device, DeviceInfo, GpuCallError
from regime_model.params import n_params
from regime_model.types import Priors
from regime_model.update import ModelSpec, build_batch, refresh

SPEC = ModelSpec(window=64, warmup_cold=150, draws=30)
TOL = 3e-5  # relative, as the identity gate's float32 kernels (gpu_backend.identity)


def _inputs(K: int, T: int, lanes: int = 5) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(10 * K + T)
    y = gen.standard_normal((lanes, T)) * np.where(gen.random((lanes, T)) < 0.3, 3.0, 1.0)
    return 0.5 * gen.standard_normal((lanes, n_params(K))), y


@pytest.mark.parametrize("lane_threads", [8, 32])
# T = TMAX: every thread's chunk is as long as its private array of messages
@pytest.mark.parametrize(("K", "T"), [(2, 1), (2, 7), (2, 64), (3, 33), (4, 50), (2, TMAX)])
def test_the_scan_kernels_give_the_reference_density_gradient_and_predictive(
    gpu_device: Device, lane_threads: int, K: int, T: int
) -> None:
    theta, y = _inputs(K, T)
    gpu, cpu = lane_backend(gpu_device, lane_threads), NumpyBackend()
    value, grad = gpu.hmm_value_and_grad(theta, y, K, Priors())
    ref_value, ref_grad = cpu.hmm_value_and_grad(theta, y, K, Priors())
    np.testing.assert_allclose(value, ref_value, rtol=TOL)
    np.testing.assert_allclose(grad, ref_grad, rtol=TOL, atol=TOL * np.abs(ref_grad).max())
    pred, ref = gpu.hmm_predictive(theta, y, K), cpu.hmm_predictive(theta, y, K)
    np.testing.assert_allclose(pred.filtered_last, ref.filtered_last, atol=1e-5)
    np.testing.assert_allclose(pred.mean, ref.mean, atol=1e-5)
    np.testing.assert_allclose(pred.var, ref.var, rtol=1e-4)


def test_the_scan_kernels_are_compiled_for_the_window_rounded_up_to_a_power_of_two() -> None:
    """Workgroup memory and each thread's private messages are sized by the window the
    module is compiled for, not by the longest the kernels take."""
    assert [window_capacity(T) for T in (1, 32, 33, 200, 256, 257, TMAX)] == [
        32, 32, 64, 256, 256, 512, TMAX]  # fmt: skip
    assert workgroup_bytes(2, 32, window_capacity(256)) == workgroup_bytes(2, 32) - 4 * 768
    with pytest.raises(ValueError, match="1 to 1024 bars"):
        window_capacity(TMAX + 1)


def test_lane_threads_shrink_to_what_workgroup_memory_holds() -> None:
    # K x K matrices: a K = 2 lane's scans need a quarter of K = 4's matrix memory
    assert lane_threads_for(2, 64) == 64
    assert lane_threads_for(2, 256) == 64
    assert lane_threads_for(3, 128) == 32
    assert lane_threads_for(3, 128, window_capacity(256)) == 64  # a shorter window: more
    assert lane_threads_for(4, 128) == 32
    with pytest.raises(ValueError, match="power of two"):
        lane_threads_for(2, 48)


@pytest.mark.parametrize("shift_moves", [False, True])
def test_the_one_dispatch_update_makes_the_host_accept_decisions(
    gpu_device: Device, shift_moves: bool
) -> None:
    spec = replace(SPEC, shift_moves=shift_moves)
    agreement = compare_draw_phase(lane_backend(gpu_device, 8), NumpyBackend(), spec, 3,
                                   summer_2008() if shift_moves else None)
    assert agreement.decision_mismatches == 0, agreement
    assert agreement.passed, agreement
    assert (agreement.shifted_lanes > 0) == shift_moves, "accepted moves, where they run"


def _info(adapter_type: str, subgroup_size: int) -> DeviceInfo:
    return DeviceInfo("adapter", "driver", "Vulkan", adapter_type, frozenset(), 1 << 27,
                      1 << 31, subgroup_size)  # fmt: skip


def test_a_gpu_runs_lanes_of_a_warp_and_a_cpu_adapter_its_warm_lanes_of_one_subgroup() -> None:
    assert threads_per_lane(_info("DiscreteGPU", 32), None) == (LANE_THREADS, LANE_THREADS)
    # the HMM kernels (the cold path) a thread per lane; warm batches on the lane sampler
    assert threads_per_lane(_info("CPU", 8), None) == (0, 8)
    assert threads_per_lane(_info("CPU", 0), None) == (0, 0)  # no subgroups: per step
    assert threads_per_lane(_info("CPU", 8), 16) == (16, 16)  # asked for: both


def test_lavapipes_default_backend_compiles_its_lane_module_at_the_first_warm_batch(
    gpu_device: Device,
) -> None:
    backend = WgpuBackend(gpu_device)
    lane = backend.lane_sampler
    assert lane is not None and lane.lane_threads == gpu_device.info.subgroup_size
    assert backend.kernels.lane_threads == 0 and lane.cache.compiled == 0
    agreement = compare_draw_phase(backend, NumpyBackend(), replace(SPEC, draws=8), 2)
    assert agreement.decision_mismatches == 0, agreement
    assert lane.cache.compiled == 1  # K = 2's alone


@pytest.mark.parametrize("K", [3, 4])
def test_the_one_dispatch_update_makes_the_host_accept_decisions_at_more_states(
    gpu_device: Device, K: int
) -> None:
    """Thread 0 keeps its lane's state and trajectory in private arrays sized for the
    module's K (4 D + 7 floats, D of position and of gradient: 127 at K = 4); at 3 and 4
    states they hold every parameter the reference moves."""
    spec = replace(SPEC, n_states=K, draws=12)
    agreement = compare_draw_phase(lane_backend(gpu_device, 8), NumpyBackend(), spec, 2)
    assert agreement.decision_mismatches == 0, agreement
    assert agreement.passed, agreement


def test_a_run_past_llvmpipes_loop_limit_is_split_and_makes_the_host_accept_decisions(
    gpu_device: Device,
) -> None:
    """llvmpipe ends every loop of an invocation once its loops together have run 65,535
    times. 120 iterations of the warm update's 4-8 leapfrog steps at chunks of 32 bars pass
    that at iteration 93 (75 while the sampler's loops over the parameters were loops: a
    lane's state in registers unrolls them): in one dispatch the chains would stop there,
    so the sampler refuses the run; split into dispatches of one submission it makes the
    reference's accept decisions to the last draw."""
    backend = lane_backend(gpu_device, 8)
    lane = backend.lane_sampler
    assert lane is not None and lane.bounded_loops, "the suite runs on lavapipe"
    spec = replace(SPEC, window=256, draws=120)  # 256 bars over 8 threads: chunks of 32
    lane.bounded_loops = False
    try:
        with pytest.raises(GpuCallError, match=r"stopped at iteration [0-9]+ of 120"):
            compare_draw_phase(backend, NumpyBackend(), spec, 3)
    finally:
        lane.bounded_loops = True
    submitted, dispatched = lane.submissions, lane.dispatches
    agreement = compare_draw_phase(backend, NumpyBackend(), spec, 3)
    assert agreement.decision_mismatches == 0, agreement
    assert agreement.passed, agreement
    assert lane.submissions == submitted + 1
    assert lane.dispatches > dispatched + 1


def test_a_dispatch_takes_iterations_while_their_gradients_fit_its_budget() -> None:
    steps = np.array([3, 4, 2, 5, 1, 1], dtype=np.uint32)
    assert dispatch_starts(steps, False, 0) == [0]  # a GPU: one dispatch
    # each dispatch also evaluates its start: 1 + 3 + 4 + 2 = 10, then 1 + 5 + 1 + 1
    assert dispatch_starts(steps, False, 10) == [0, 3]
    # the move adds one per iteration: 1 + 4 + 5, then 1 + 3 + 6, then 1 + 2 + 2
    assert dispatch_starts(steps, True, 10) == [0, 2, 4]
    assert dispatch_starts(steps, False, 1) == list(range(6))  # at least one iteration each
    assert gradient_budget(32, 6) * (4 * 32 + 8 * 6 + 64) <= LLVMPIPE_LOOP_LIMIT // 2


def test_only_a_split_run_reads_where_to_start_and_checks_its_budget() -> None:
    """A GPU runs the whole update in one dispatch: its module starts at iteration 0 and
    carries none of the split's work (measured on the H200: docs/benchmarks.md)."""
    whole, split = (lane_sampler_source(2, 32, 64, "kahan", 256, s) for s in (False, True))
    assert "let start = 0u;" in whole and "sp.budget" not in whole
    assert "workgroupUniformLoad(&shared_start)" in split and "sp.budget" in split


def test_the_one_dispatch_update_with_readaptation_agrees_within_monte_carlo_error(
    gpu_device: Device,
) -> None:
    backend = lane_backend(gpu_device, 8)
    agreement = compare_warm_samplers(backend, NumpyBackend(), SPEC, replicates=4)
    assert agreement.passed, agreement


def _warm_batch(instruments: int, window: int = SPEC.window):  # type: ignore[no-untyped-def]
    spec = ModelSpec(window=window, warmup_cold=150, draws=30, extend_max=0)  # narrow carries
    returns = 0.01 * regime_returns(instruments, window, np.random.default_rng(5))
    keys = np.arange(instruments)
    _, carries, _ = refresh(returns, [None] * instruments, keys, 1, 3, spec, NumpyBackend())
    return build_batch(returns, list(carries), keys, 2, 3, spec)[0]


def test_the_one_dispatch_update_brings_each_draws_predictive_and_creates_nothing(
    gpu_device: Device,
) -> None:
    backend = lane_backend(gpu_device, 8)
    lane = backend.lane_sampler
    assert lane is not None
    batch = _warm_batch(2)
    first = run_twice_in_steady_state(backend, lane, batch)
    # The predictive it brought is the reference's at the very draws it returned.
    assert first.predictive is not None
    L, S, D = first.draws.shape
    ref = NumpyBackend().hmm_predictive(
        first.draws.reshape(L * S, D), np.repeat(batch.y, S, axis=0), batch.n_states
    )
    np.testing.assert_allclose(first.predictive.filtered_last, ref.filtered_last, atol=1e-5)
    np.testing.assert_allclose(first.predictive.mean, ref.mean, atol=1e-5)
    np.testing.assert_allclose(first.predictive.var, ref.var, rtol=1e-4)


def test_the_scan_kernels_leave_the_message_scratch_unallocated(gpu_device: Device) -> None:
    """The thread-per-lane gradient keeps every lane's filtered messages in a device
    scratch of lanes x T x K floats; a scan kernel keeps its chunk's in each thread's own
    array, so a lane run binds a scratch of one word, and a thread-per-lane run the whole."""
    batch = _warm_batch(2)
    lanes, T = batch.y.shape
    scan = lane_backend(gpu_device, 8)
    scan.run_update(batch)
    assert scan.kernels.pool.size("scratch") == MIN_CAPACITY  # the smallest buffer
    serial = lane_backend(gpu_device, 0)
    theta, y = _inputs(2, T, lanes)
    serial.hmm_value_and_grad(theta, y, 2, Priors())
    assert serial.kernels.pool.size("scratch") >= 4 * lanes * T * 2


def test_a_window_longer_than_workgroup_memory_runs_a_dispatch_per_step(
    gpu_device: Device,
) -> None:
    backend = lane_backend(gpu_device, 8)
    assert backend.lane_sampler is not None and backend.sampler is not None
    batch = _warm_batch(1, window=TMAX + 1)
    before = (backend.lane_sampler.submissions, backend.sampler.submissions)
    result = backend.run_update(batch)
    assert backend.lane_sampler.submissions == before[0]
    assert backend.sampler.submissions == before[1] + 1
    assert result.predictive is None
