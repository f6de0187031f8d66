"""Each bar's emission computed once per gradient on a CPU adapter.

A gradient passes over its chunk of bars three times (the chunk's transfer-matrix product,
then the forward and backward passes), and each pass computed every bar's emission, an
exponential per state, again. Where exponentials are dear (lavapipe: a third of a warm
run) the product keeps them for the two passes after it (shaders/hmm_scan.py's
`keep_emissions`); on a GPU, where keeping them was slower, each pass computes them. Either
way the values are the same, so a run is the same bits.
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

from gpu_backend.shaders.hmm_scan import scan_source
from gpu_backend.wgpu_device import Device
from regime_model.batches import UpdateBatch


@pytest.mark.parametrize("split", [True, False])
def test_a_run_with_its_emissions_kept_is_the_run_that_computes_them_in_each_pass(
    gpu_device: Device, two_readings_batch: UpdateBatch, split: bool
) -> None:
    """Draw for draw, in each draw's predictive and the summary; split into dispatches
    (llvmpipe's loop limit, where a later dispatch's first filter keeps them too) and
    whole."""
    backend = lane_backend(gpu_device, gpu_device.info.subgroup_size)
    lane = backend.lane_sampler
    assert lane is not None
    assert lane.keep_emissions == (gpu_device.info.adapter_type == "CPU")
    bounded, kept = lane.bounded_loops, lane.keep_emissions
    results = []
    try:
        lane.bounded_loops = split
        for keep in (False, True):
            lane.keep_emissions = keep
            results.append(backend.run_update(two_readings_batch))
    finally:
        lane.bounded_loops, lane.keep_emissions = bounded, kept
    assert_same_bits(*results)
    assert results[0].shift_rate is not None and results[0].shift_rate.max() > 0


def test_the_kept_emissions_replace_the_passes_own() -> None:
    computed, kept = scan_source(2, 8, 256), scan_source(2, 8, 256, keep_emissions=True)
    assert computed.count("vemit(v, ys[t])") == 3 and "chunk_emit" not in computed
    assert kept.count("vemit(v, ys[t])") == 1
    assert kept.count("chunk_emit[t - t0] = e;") == 1 and kept.count("= chunk_emit[t - t0];") == 2
