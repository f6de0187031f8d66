"""The lane sampler's runs summarised on the device (shaders/run_summary.py): a pass after
the run's dispatches, in its submission, whose rows come back with its read back.

Owns the pass's pipelines, its buffers' roles in the pool, what it writes before the pass
(each instrument's first lane, the normal scores of the draw count, the uniform) and the
rows it reads back, spread to the lanes as regime_model.run_summary lays them out.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np

from gpu_backend.buffer_pool import cached_bind_group
from gpu_backend.pipeline_cache import PipelineCache
from gpu_backend.shaders.run_summary import (
    ENTRY_SUMMARY,
    NMAX_WIDE,
    NO_TABLE,
    SUMMARY_BINDINGS,
    WORKGROUP,
    run_summary_source,
    workgroup_bytes,
)
from regime_model import diagnostics, run_summary
from regime_model.backend import UpdateBatch
from regime_model.types import FloatArray, IntArray

ROLES = ("r_params", "s_out", "s_pred", "r_scores", "r_first", "r_rows")


def usage() -> dict[str, int]:
    import wgpu  # noqa: PLC0415

    u = wgpu.BufferUsage
    return {
        "r_params": u.UNIFORM | u.COPY_DST,
        "r_scores": u.STORAGE | u.COPY_DST,
        "r_first": u.STORAGE | u.COPY_DST,
        "r_rows": u.STORAGE | u.COPY_SRC,
    }


def first_lanes(batch: UpdateBatch) -> IntArray:
    """[n + 1] each instrument's first lane, then the lane count: lanes are instrument-major
    and an instrument's lanes are consecutive (a joined batch's too: batch_join)."""
    window = batch.window
    assert window is not None
    lane_rows = np.repeat(window.instruments(), window.chains)
    starts = np.flatnonzero(lane_rows[1:] != lane_rows[:-1]) + 1
    out: IntArray = np.concatenate([[0], starts, [len(lane_rows)]]).astype(np.uint32)
    return out


def _min_tau(pooled: int) -> float:
    """1 / the most ESS per draw diagnostics._ess credits (read at each run, as it does)."""
    most = diagnostics.ESS_MOST_PER_DRAW
    return 1.0 / (np.log10(pooled) if most is None else most)


def _pooled(first: IntArray, draws: int) -> IntArray:
    """[n] each instrument's pooled split-chain draws: its lanes x 2 halves of draws // 2."""
    lanes = first[1:].astype(np.int64) - first[:-1].astype(np.int64)
    out: IntArray = 2 * (draws // 2) * lanes
    return out


def _table_counts(first: IntArray, draws: int) -> list[int]:
    """The pooled counts that get a score table: those a module may sort."""
    return sorted({int(c) for c in _pooled(first, draws) if 2 <= c <= NMAX_WIDE})


def _layout(written: dict[int, int], first: IntArray, draws: int) -> dict[int, int]:
    """Each pooled count's table offset in the scores buffer: those `written` before where
    they are, this run's new counts after them (a first run's counts and its run-on
    blocks' differ; each keeps its place, so neither rewrites the other's)."""
    offsets = dict(written)
    end = sum(2 * c for c in offsets)
    for count in _table_counts(first, draws):
        if count not in offsets:
            offsets[count], end = end, end + 2 * count
    return offsets


def _scores_bytes(offsets: dict[int, int]) -> int:
    """The scores buffer's bytes for every table of `offsets`: each count's place is 2 x
    count floats (`_layout`), of which its table (1 / most ESS per draw, then its scores)
    takes 1 + count."""
    return 4 * max(1, sum(2 * c for c in offsets))


class DeviceSummary:
    """The summary pass of one device's lane sampler."""

    def __init__(self, handle: Any, states: tuple[int, ...], wide: bool = True) -> None:
        self.handle = handle
        self.cache = PipelineCache(handle, SUMMARY_BINDINGS)
        # The wide module if asked for and the device gives a workgroup its memory (a wide
        # instrument's 1,280 pooled draws sorted: 29.7 KB at K = 4; wgpu's default allows
        # 16 KB, Vulkan devices 32 KB or more, which wgpu_device asks for).
        room = int(handle.limits.get("max-compute-workgroup-storage-size", 0))
        self.wide = wide and all(workgroup_bytes(K, NMAX_WIDE) <= room for K in states)
        self.passes = 2 if self.wide else 1  # dispatches a run's summary records
        for K in states:
            for source in self._sources(K):
                self.cache.get(source, K, WORKGROUP, ENTRY_SUMMARY)
        self._group: tuple[int, Any] | None = None
        self._offsets: dict[int, int] = {}  # pooled count -> its table's offset, written
        self._kept: tuple[Any, ...] | None = None  # the generation and cap they were written at

    def _sources(self, K: int) -> list[str]:
        narrow = run_summary_source(K)
        return [narrow, run_summary_source(K, NMAX_WIDE)] if self.wide else [narrow]

    def sizes(self, first: IntArray, K: int, D: int, draws: int) -> dict[str, int]:
        """The pass's buffers for instruments from `first` (first_lanes) of `draws` draws."""
        n = len(first) - 1
        return {
            "r_params": 16,
            "r_scores": _scores_bytes(_layout(self._offsets, first, draws)),
            "r_first": 4 * (2 * n + 1),
            "r_rows": DeviceSummary.rows_bytes(n, K, D),
        }

    @staticmethod
    def rows_bytes(instruments: int, K: int, D: int) -> int:
        """The read back rows' bytes: a row of float32 per instrument."""
        return 4 * instruments * run_summary.width(K, D)

    def write(self, queue: Any, buffers: dict[str, Any], first: IntArray, draws: int,
              generation: int) -> int:  # fmt: skip
        """The pass's inputs for the instruments from `first`; returns how many. A score
        table is written once per pool generation (its buffers) and 1 / most ESS per draw,
        not at every run: 10 KB a run with wide instruments."""
        kept = (generation, diagnostics.ESS_MOST_PER_DRAW)
        if kept != self._kept:  # new buffers, or another cap: every table written anew
            self._offsets, self._kept = {}, kept
        offsets = _layout(self._offsets, first, draws)
        new = set(offsets) - set(self._offsets)
        self._offsets = offsets
        return _write(queue, buffers, first, draws, self.wide, offsets, new)

    def alone(self, draws: FloatArray, pred: FloatArray, first: IntArray, K: int) -> FloatArray:
        """The pass on its own, over draws [L, S, D] and each draw's predictive
        [L * S, K + 2] uploaded as float32, instruments from `first` [n + 1] (one with more
        pooled draws than a module sorts gets a NaN row): the rows [n, width] (tests)."""
        import wgpu  # noqa: PLC0415

        u, handle = wgpu.BufferUsage, self.handle
        L, S, D = draws.shape
        energy = np.zeros((L, S))
        data = {"s_out": np.concatenate([draws.ravel(), energy.ravel()]), "s_pred": pred}
        buffers = {role: handle.create_buffer_with_data(
            data=np.ascontiguousarray(x, dtype=np.float32), usage=u.STORAGE)
            for role, x in data.items()}  # fmt: skip
        n, first = len(first) - 1, np.asarray(first, dtype=np.uint32)
        offsets = _layout({}, first, S)  # its own buffers: every table written
        for role, nbytes in {**self.sizes(first, K, D, S),
                             "r_scores": _scores_bytes(offsets)}.items():
            buffers[role] = handle.create_buffer(size=nbytes, usage=usage()[role])
        _write(handle.queue, buffers, first, S, self.wide, offsets, set(offsets))
        encoder = handle.create_command_encoder()
        # these buffers are not the pool's: no cached bind group is used for them or kept
        self._group = None
        self.encode(encoder, buffers, -1, K, n)
        self._group = None
        handle.queue.submit([encoder.finish()])
        raw = handle.queue.read_buffer(buffers["r_rows"])
        rows: FloatArray = np.frombuffer(raw, dtype=np.float32).reshape(n, -1).astype(np.float64)
        return rows

    def encode(self, encoder: Any, buffers: dict[str, Any], generation: int, K: int,
               instruments: int, timestamp_writes: Any = None) -> None:  # fmt: skip
        """Records the pass after the run's (the draws and predictive are its inputs);
        `timestamp_writes` as a compute pass takes them (docs/bench-results/summary_pass.py)."""
        self._group = cached_bind_group(self._group, generation, self.handle,
                                        self.cache.bind_group_layout, buffers, ROLES)  # fmt: skip
        compute = encoder.begin_compute_pass(timestamp_writes=timestamp_writes)
        compute.set_bind_group(0, self._group[1])
        for source in self._sources(K):  # each takes the instruments of its size
            compute.set_pipeline(self.cache.get(source, K, WORKGROUP, ENTRY_SUMMARY))
            compute.dispatch_workgroups(instruments, 1, 1)
        compute.end()

    @staticmethod
    def lane_rows(raw: np.ndarray, first: IntArray, K: int, D: int) -> FloatArray:
        """[lanes, width] the read back rows of instruments from `first`, each lane its
        instrument's (float64)."""
        rows = raw.view(np.float32).reshape(len(first) - 1, run_summary.width(K, D))
        at = first.astype(np.int64)
        out: FloatArray = np.repeat(rows.astype(np.float64), at[1:] - at[:-1], axis=0)
        return out


def _write(queue: Any, buffers: dict[str, Any], first: IntArray, draws: int, wide: bool,
           offsets: dict[int, int], new: set[int]) -> int:  # fmt: skip
    """The pass's inputs for instruments from `first` of `draws` draws each: their first
    lanes, then each one's score table offset (`offsets` by pooled count; NO_TABLE past
    what a module sorts), and the tables of the counts in `new`, each its 1 / most ESS per
    draw and then the normal scores of its pooled count; returns the instruments."""
    n = len(first) - 1
    pooled = _pooled(first, draws)
    table = np.full(n, NO_TABLE, dtype=np.uint32)
    for count in _table_counts(first, draws):
        table[pooled == count] = offsets[count]
    queue.write_buffer(buffers["r_first"], 0, np.concatenate([first.astype(np.uint32), table]))
    for count in sorted(new):
        scores = np.concatenate([[_min_tau(count)], diagnostics._scores(count)])
        queue.write_buffer(buffers["r_scores"], 4 * offsets[count], scores.astype(np.float32))
    params = struct.pack("<4I", n, draws, draws // 2, int(wide))
    queue.write_buffer(buffers["r_params"], 0, params)
    return n
