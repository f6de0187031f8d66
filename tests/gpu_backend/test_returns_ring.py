"""The returns window lives on the device and takes each new bar in place (issue 14)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from wgpu_fixtures import fixture_gpu_device, lane_backend  # noqa: F401 - fixture

from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.returns_ring import ReturnsRing
from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_device import Device
from regime_model.backend import UpdateBatch
from regime_model.update import InstrumentCarry, ModelSpec, build_batch, refresh

# Short: the ring wraps soon; few draws, no re-adaptation and no level-shift move, since
# the ring, not the sampler, is under test here (26 device updates on lavapipe).
SPEC = ModelSpec(window=16, warmup_cold=150, warmup_warm=0, draws=4, shift_moves=False)
N = 2


def _series(bars: int) -> np.ndarray:
    return 0.01 * regime_returns(N, SPEC.window + bars, np.random.default_rng(11))


def _carries(series: np.ndarray) -> list[InstrumentCarry | None]:
    keys = np.arange(N)
    one_batch = replace(SPEC, extend_max=0)  # narrow carries: the batches below are narrow
    _, carries, _ = refresh(series[:, : SPEC.window], [None] * N, keys, 1, 5, one_batch,
                            NumpyBackend())  # fmt: skip
    return list(carries)


def _batch(series: np.ndarray, bar: int, carries: list[InstrumentCarry | None]) -> UpdateBatch:
    window = series[:, bar : bar + SPEC.window]
    return build_batch(window, carries, np.arange(N), bar + 2, 5, SPEC)[0]


def _ring_in_window_order(backend: WgpuBackend, head: int) -> np.ndarray:
    lane = backend.lane_sampler
    assert lane is not None
    nbytes = 4 * SPEC.window * N
    ring = backend.kernels.pool.get("s_ring", nbytes, lane._usage["s_ring"])  # the one in use
    raw = backend.device.handle.queue.read_buffer(ring, 0, nbytes)
    slots = np.frombuffer(raw, dtype=np.float32).reshape(SPEC.window, N)
    return np.roll(slots, -head, axis=0).T  # [N, T], bar 0 first


def test_the_ring_equals_a_fresh_upload_after_many_bars_and_jumps(gpu_device: Device) -> None:
    backend = lane_backend(gpu_device, 8)
    lane = backend.lane_sampler
    assert lane is not None
    lane.ring = ReturnsRing()  # the shared backend's ring may hold another test's window
    series = _series(30)
    carries = _carries(series)
    # 20 consecutive bars (the head wraps past T = 16), a jump of 3 (a full upload), then
    # 5 more consecutive bars.
    bars = [*range(20), *range(23, 28)]
    for bar in bars:
        batch = _batch(series, bar, carries)
        last = backend.run_update(batch)
        held = lane.ring._held
        assert held is not None
        np.testing.assert_array_equal(
            _ring_in_window_order(backend, held.head),
            series[:, bar : bar + SPEC.window].astype(np.float32),
        )
    assert lane.ring.bars_written == 2 * SPEC.window + (20 - 1) + (5 - 1)
    # The kernel reads the ring from its head (4 here): the last update again from a whole
    # upload of the same window (head 0) gives the same draws bit for bit.
    assert held.head == 4
    lane.ring = ReturnsRing()
    np.testing.assert_array_equal(last.draws, backend.run_update(batch).draws)


def test_another_set_of_instruments_is_a_full_upload(gpu_device: Device) -> None:
    backend = lane_backend(gpu_device, 8)
    lane = backend.lane_sampler
    assert lane is not None
    series = _series(2)
    carries = _carries(series)
    backend.run_update(_batch(series, 0, carries))
    one = build_batch(series[:1, 1 : 1 + SPEC.window], carries[:1], np.arange(1), 3, 5, SPEC)[0]
    before = lane.ring.bars_written
    backend.run_update(one)
    assert lane.ring.bars_written == before + SPEC.window


def test_a_batch_without_its_window_uploads_y_whole_and_agrees(gpu_device: Device) -> None:
    backend = lane_backend(gpu_device, 8)
    lane = backend.lane_sampler
    assert lane is not None
    series = _series(1)
    spec = replace(SPEC, warmup_warm=0)  # no re-adaptation: draws comparable one by one
    keys = np.arange(N)
    batch = build_batch(series[:, 1:], _carries(series), keys, 3, 5, spec)[0]
    written = lane.ring.bars_written
    from_y = backend.run_update(batch._replace(window=None))
    assert lane.ring.bars_written == written  # the ring was not used
    # y scaled on the host or on the device differs in the last float32 bit at most.
    np.testing.assert_allclose(from_y.draws, backend.run_update(batch).draws, atol=1e-5)


def test_a_block_reads_its_instruments_from_the_accounts_ring_and_writes_nothing(
    gpu_device: Device,
) -> None:
    """An extension block of the update's second instrument: the device picks it from the
    ring the update left (no bar written) and samples what an upload of its y gives."""
    backend = lane_backend(gpu_device, 8)
    lane = backend.lane_sampler
    assert lane is not None
    series = _series(1)
    spec = replace(SPEC, warmup_warm=0)  # no re-adaptation: draws comparable one by one
    carries, keys, window = _carries(series), np.arange(N), series[:, 1:]
    backend.run_update(build_batch(window, carries, keys, 3, 5, spec)[0])
    rows = np.array([1])
    block = build_batch(window, carries[1:], keys[rows], 3, 5, spec, extension=1, rows=rows)[0]
    written = lane.ring.bars_written
    from_ring = backend.run_update(block)
    assert lane.ring.bars_written == written
    from_y = backend.run_update(block._replace(window=None))
    np.testing.assert_allclose(from_ring.draws, from_y.draws, atol=1e-5)
