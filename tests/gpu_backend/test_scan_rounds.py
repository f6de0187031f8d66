"""The lane sampler's scan rounds as shuffles where a lane's threads are one subgroup.

Through workgroup memory each round of the scans and of the sums is a store, a barrier
and a load; as shuffles it is a register exchange, and a lane's workgroup keeps only its
window (shaders/scan_rounds.py). The shuffles add the same terms in the same order, so a
run is the same bits either way. lavapipe's subgroups are 8 threads (a 256-bit vector of
f32): lanes of 8 threads shuffle there; lanes of 16 or 32 would not be one subgroup.
"""

from __future__ import annotations

import pytest
from wgpu_fixtures import (  # noqa: F401 - fixtures
    assert_same_bits,
    fixture_gpu_device,
    fixture_two_readings_batch,
    fixture_wgpu_backend,
    lane_backend,
)

from gpu_backend.shaders.hmm_scan import lane_threads_for, workgroup_bytes
from gpu_backend.shaders.lane_sampler import lane_sampler_source
from gpu_backend.subgroup_size import measure_subgroup_size
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device, GpuCallError
from regime_model.batches import UpdateBatch


def test_the_device_reports_one_subgroup_size_for_every_workgroup_size(
    gpu_device: Device,
) -> None:
    size = gpu_device.info.subgroup_size
    assert size > 0 and size & (size - 1) == 0, "lavapipe has subgroups of a power of two"
    assert [measure_subgroup_size(gpu_device.handle, n) for n in (8, 32, 64)] == [size] * 3


@pytest.mark.parametrize("split", [True, False])
def test_lanes_of_one_subgroup_shuffle_their_rounds_and_give_the_same_bits(
    gpu_device: Device, two_readings_batch: UpdateBatch, split: bool
) -> None:
    """A warm run with shuffled rounds is the workgroup rounds' run, draw for draw and
    in each draw's predictive and the summary; split into dispatches (llvmpipe's loop
    limit) and whole. Lanes of the subgroup's threads shuffle unless told not to."""
    threads = gpu_device.info.subgroup_size
    shuffled = lane_backend(gpu_device, threads)
    through_memory = WgpuBackend(gpu_device, lane_threads=threads, subgroups=False)
    results = []
    for backend, subgroups in ((through_memory, False), (shuffled, True)):
        lane = backend.lane_sampler
        assert lane is not None and lane.subgroups == subgroups
        bounded, lane.bounded_loops = lane.bounded_loops, split
        try:
            results.append(backend.run_update(two_readings_batch))
        finally:
            lane.bounded_loops = bounded
    assert_same_bits(*results)
    assert results[0].shift_rate is not None and results[0].shift_rate.max() > 0


def test_a_lane_run_at_another_subgroup_size_stops_and_later_runs_use_workgroup_memory(
    gpu_device: Device, two_readings_batch: UpdateBatch
) -> None:
    """Lanes of twice the subgroup's threads are two subgroups: shuffles would read only
    half the lane. The kernel sees its subgroup size and stops its lanes unrun; the run
    fails naming both sizes, and the next run is the workgroup rounds' one."""
    threads = 2 * gpu_device.info.subgroup_size
    backend = WgpuBackend(gpu_device, lane_threads=threads, subgroups=True)
    with pytest.raises(GpuCallError, match=rf"subgroups of {threads // 2} threads .* {threads}"):
        backend.run_update(two_readings_batch)
    assert backend.lane_sampler is not None and not backend.lane_sampler.subgroups
    reference = WgpuBackend(gpu_device, lane_threads=threads, subgroups=False)
    batch = two_readings_batch
    assert_same_bits(backend.run_update(batch), reference.run_update(batch))


def test_a_lane_of_one_subgroup_holds_only_its_window_in_workgroup_memory() -> None:
    assert workgroup_bytes(2, 32, 256, subgroups=True) == 4 * 256
    assert workgroup_bytes(2, 32, 256) == 4 * 256 + 32 * (2 * 16 + 8 * 9)
    # the shuffles need the request as it is: four states' matrices do not shrink it
    assert lane_threads_for(4, 128, subgroups=True) == 128 > lane_threads_for(4, 128)
    source = lane_sampler_source(2, 32, 64, "f64", 256, subgroups=True)
    assert "var<workgroup> red" not in source and "var<workgroup> mats" not in source
    assert "@builtin(subgroup_size)" in source
