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
    NMAX,
    SUMMARY_BINDINGS,
    WORKGROUP,
    run_summary_source,
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


class DeviceSummary:
    """The summary pass of one device's lane sampler."""

    def __init__(self, handle: Any, states: tuple[int, ...]) -> None:
        self.handle = handle
        self.cache = PipelineCache(handle, SUMMARY_BINDINGS)
        for K in states:
            self.cache.get(run_summary_source(K), K, WORKGROUP, ENTRY_SUMMARY)
        self._group: tuple[int, Any] | None = None

    @staticmethod
    def sizes(first: IntArray, K: int, D: int) -> dict[str, int]:
        """The pass's buffers for instruments from `first` (first_lanes)."""
        n = len(first) - 1
        return {
            "r_params": 32,
            "r_scores": 4 * (2 * NMAX),
            "r_first": 4 * (n + 1),
            "r_rows": 4 * n * run_summary.width(K, D),
        }

    @staticmethod
    def write(queue: Any, buffers: dict[str, Any], first: IntArray, batch: UpdateBatch,
              draws: int) -> int:  # fmt: skip
        """The pass's inputs for `batch`'s instruments from `first`; returns how many."""
        return _write(queue, buffers, first, batch.config.chains, draws)

    def alone(self, draws: FloatArray, pred: FloatArray, first: IntArray, chains: int,
              K: int) -> FloatArray:  # fmt: skip
        """The pass on its own, over draws [L, S, D] and each draw's predictive
        [L * S, K + 2] uploaded as float32, instruments from `first` [n + 1] (one with
        other than `chains` lanes gets a NaN row): the rows [n, width] (tests)."""
        import wgpu  # noqa: PLC0415

        u, handle = wgpu.BufferUsage, self.handle
        L, S, D = draws.shape
        energy = np.zeros((L, S))
        data = {"s_out": np.concatenate([draws.ravel(), energy.ravel()]), "s_pred": pred}
        buffers = {role: handle.create_buffer_with_data(
            data=np.ascontiguousarray(x, dtype=np.float32), usage=u.STORAGE)
            for role, x in data.items()}  # fmt: skip
        n = len(first) - 1
        sizes = {"r_params": 32, "r_scores": 8 * NMAX, "r_first": 4 * (n + 1),
                 "r_rows": 4 * n * run_summary.width(K, D)}  # fmt: skip
        for role, nbytes in sizes.items():
            buffers[role] = handle.create_buffer(size=nbytes, usage=usage()[role])
        _write(handle.queue, buffers, np.asarray(first, dtype=np.uint32), chains, S)
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
               instruments: int) -> None:  # fmt: skip
        """Records the pass after the run's (the draws and predictive are its inputs)."""
        pipeline = self.cache.get(run_summary_source(K), K, WORKGROUP, ENTRY_SUMMARY)
        self._group = cached_bind_group(self._group, generation, self.handle,
                                        self.cache.bind_group_layout, buffers, ROLES)  # fmt: skip
        compute = encoder.begin_compute_pass()
        compute.set_pipeline(pipeline)
        compute.set_bind_group(0, self._group[1])
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


def _write(queue: Any, buffers: dict[str, Any], first: IntArray, chains: int, draws: int) -> int:
    """The pass's inputs for instruments from `first` of `chains` lanes of `draws` draws
    each; returns the instruments."""
    half = draws // 2
    pooled = 2 * chains * half
    queue.write_buffer(buffers["r_first"], 0, first)
    if 2 <= pooled <= NMAX:  # otherwise every row is NaN and no score is read
        queue.write_buffer(buffers["r_scores"], 0, diagnostics._scores(pooled).astype(np.float32))
    n = len(first) - 1
    params = struct.pack("<4If3I", n, draws, half, chains, _min_tau(pooled), int(first[-1]), 0, 0)
    queue.write_buffer(buffers["r_params"], 0, params)
    return n
