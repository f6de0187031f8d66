"""A warm batch's whole sampler run as ONE dispatch, a workgroup per lane.

Same algorithm, state layout and read back as wgpu_sampler (whose `plan` it uses), but
recorded as a single dispatch of shaders/lane_sampler.py instead of one per leapfrog step,
and with each draw's predictive computed on the device beside it: the update's summary
needs no second submission. Runs where the HMM kernels have scan kernels on and the
window fits in workgroup memory (`fits`).
"""

from __future__ import annotations

import struct
import time
from typing import Any

import numpy as np

from gpu_backend.buffer_pool import cached_bind_group, read_back
from gpu_backend.pipeline_cache import PipelineCache
from gpu_backend.returns_ring import ReturnsRing
from gpu_backend.shaders.hmm import ENTRY_VALUE_GRAD
from gpu_backend.shaders.hmm_scan import TMAX
from gpu_backend.shaders.lane_sampler import (
    ENTRY_RUN,
    HMM_RW_BINDINGS,
    LANE_SAMPLER_BINDINGS,
    lane_sampler_source,
)
from gpu_backend.wgpu_kernels import HmmKernels, Launch, params_bytes
from gpu_backend.wgpu_sampler import Plan, Readout, plan, sample_result
from regime_model.backend import UpdateBatch
from regime_model.sampler import SampleResult
from regime_model.types import PredictiveBatch

_HMM_ROLES = ("params", "y", "theta", "value", "vec", "scratch")
_ROLES = ("s_params", "s_float", "s_word", "s_steps", "s_out", "s_pred", "s_ring", "s_scale")
_MAX_GROUPS = 65_535


def _usage() -> dict[str, int]:
    import wgpu  # noqa: PLC0415

    u = wgpu.BufferUsage
    storage = u.STORAGE | u.COPY_DST | u.COPY_SRC
    return {
        "s_params": u.UNIFORM | u.COPY_DST,
        "s_float": storage,
        "s_word": storage,
        "s_steps": u.STORAGE | u.COPY_DST,
        "s_out": u.STORAGE | u.COPY_SRC,
        "s_pred": u.STORAGE | u.COPY_SRC,
        "s_ring": u.STORAGE | u.COPY_DST | u.COPY_SRC,  # read back by the tests
        "s_scale": u.STORAGE | u.COPY_DST,
        "s_readback": u.MAP_READ | u.COPY_DST,
    }


class LaneSampler:
    """The warm sampler loop as one dispatch on the HMM kernels' device."""

    def __init__(self, hmm: HmmKernels, states: tuple[int, ...]) -> None:
        self.hmm = hmm
        self.cache = PipelineCache(hmm.device.handle, HMM_RW_BINDINGS, LANE_SAMPLER_BINDINGS)
        self.sources = {
            K: lane_sampler_source(K, hmm.lane_threads, hmm.workgroup, hmm.accumulate)
            for K in states
        }
        for K, source in self.sources.items():
            self.cache.get(source, K, hmm.lane_threads, ENTRY_RUN)
        self._usage = _usage()
        self._groups: tuple[int, Any, Any] | None = None  # pool generation, group 0, group 1
        self.ring = ReturnsRing()
        self.submissions = 0

    @staticmethod
    def fits(batch: UpdateBatch) -> bool:
        """Whether the window fits the workgroup's memory."""
        return int(batch.y.shape[1]) <= TMAX

    def run(self, batch: UpdateBatch, constant: float) -> SampleResult:
        """The batch's run; `constant`: what the kernels leave out of the log density."""
        t0 = time.perf_counter()
        p = plan(batch)
        out, pred = self.hmm.guarded(lambda: self._run(batch, p))
        ms = 1e3 * (time.perf_counter() - t0)
        result = sample_result(batch, p, out, constant, ms)
        return result._replace(predictive=pred)

    def _buffers(self, batch: UpdateBatch, p: Plan, y_tm: Any) -> dict[str, Any]:
        hmm, L, D, S, K, window = self.hmm, p.lanes, p.D, p.draws, batch.n_states, batch.window
        buffers = hmm.buffers(Launch(ENTRY_VALUE_GRAD, K, y_tm, p.floats[:, :D], D))
        sizes = {
            "s_params": 32,
            "s_float": p.floats.nbytes,
            "s_word": p.words.nbytes,
            "s_steps": p.steps.nbytes,
            "s_out": 4 * L * S * (D + 1),
            "s_pred": 4 * L * S * (K + 2),
            "s_ring": 4 * batch.y.size // max(window.chains, 1) if window else 4,
            "s_scale": 4 * len(window.scale) if window else 4,
            "s_readback": 4 * L * S * (D + K + 3) + p.floats.nbytes + p.words.nbytes,
        }
        cap = hmm.device.info.max_binding
        return {**buffers, **hmm.pool.take(sizes, self._usage, cap, "s_readback")}

    def _bind(self, buffers: dict[str, Any]) -> tuple[Any, Any]:
        generation, handle = self.hmm.pool.generation, self.hmm.device.handle
        if self._groups is None or self._groups[0] != generation:
            layouts = self.cache.bind_group_layouts
            hmm = cached_bind_group(None, generation, handle, layouts[0], buffers, _HMM_ROLES)
            own = cached_bind_group(None, generation, handle, layouts[1], buffers, _ROLES)
            self._groups = (generation, hmm[1], own[1])
        return self._groups[1], self._groups[2]

    def _run(self, batch: UpdateBatch, p: Plan) -> tuple[Readout, PredictiveBatch]:
        L, T, D, window = p.lanes, batch.y.shape[1], p.D, batch.window
        # With the batch's returns window, y is built on the device from the ring; without
        # it (a batch not of one update), y is uploaded whole.
        if window is None:
            y_tm = np.ascontiguousarray(batch.y.T, dtype=np.float32)
        else:  # the pool sizes the kernels' y binding by it; nothing is written there
            y_tm = np.empty((T, L), dtype=np.float32)
        buffers = self._buffers(batch, p, y_tm)
        queue = self.hmm.device.handle.queue
        queue.write_buffer(buffers["params"], 0, params_bytes(L, T, D, batch.priors))
        ring = (0, 0, 0)
        if window is not None:
            generation = self.hmm.pool.generation
            head = self.ring.write(queue, buffers["s_ring"], buffers["s_scale"], window, generation)
            ring = (head, len(window.scale), window.chains)
        else:
            self.hmm.write_y(buffers["y"], y_tm)
        target = batch.config.target_accept
        sp = struct.pack("4If3I", L, D, p.warmup, p.draws, target, *ring)
        queue.write_buffer(buffers["s_params"], 0, sp)
        queue.write_buffer(buffers["theta"], 0, np.ascontiguousarray(p.floats[:, :D]))
        for role, data in (("s_float", p.floats), ("s_word", p.words), ("s_steps", p.steps)):
            queue.write_buffer(buffers[role], 0, data)
        queue.submit([self._encode(buffers, batch.n_states, p)])
        self.submissions += 1
        return self._read(buffers["s_readback"], batch.n_states, p)

    def _encode(self, buffers: dict[str, Any], K: int, p: Plan) -> Any:
        hmm = self.hmm
        pipeline = self.cache.get(self.sources[K], K, hmm.lane_threads, ENTRY_RUN)
        group0, group1 = self._bind(buffers)
        encoder = hmm.device.handle.create_command_encoder()
        compute = encoder.begin_compute_pass(timestamp_writes=hmm.timestamp_writes())
        compute.set_pipeline(pipeline)
        compute.set_bind_group(0, group0)
        compute.set_bind_group(1, group1)
        wide = min(p.lanes, _MAX_GROUPS)
        compute.dispatch_workgroups(wide, -(-p.lanes // wide))
        compute.end()
        out, offset = buffers["s_readback"], 0
        for role, n in (
            ("s_out", 4 * p.lanes * p.draws * (p.D + 1)),
            ("s_pred", 4 * p.lanes * p.draws * (K + 2)),
            ("s_float", p.floats.nbytes),
            ("s_word", p.words.nbytes),
        ):
            encoder.copy_buffer_to_buffer(buffers[role], 0, out, offset, n)
            offset += n
        if hmm.queries is not None:
            encoder.resolve_query_set(hmm.queries, 0, 2, buffers["query"], 0)
            encoder.copy_buffer_to_buffer(buffers["query"], 0, out, offset, 16)
        return encoder.finish()

    def _read(self, readback: Any, K: int, p: Plan) -> tuple[Readout, PredictiveBatch]:
        L, D, S = p.lanes, p.D, p.draws
        stamps = 16 if self.hmm.queries is not None else 0
        sizes = (4 * L * S * (D + 1), 4 * L * S * (K + 2), p.floats.nbytes, p.words.nbytes)
        raw = read_back(readback, sum(sizes) + stamps)
        if stamps:
            begin, end = raw[-16:].view(np.uint64)
            self.hmm.gpu_ns += int(end - begin)
        ends = np.cumsum(sizes)
        out = raw[: ends[0]].view(np.float32)
        pred = raw[ends[0] : ends[1]].view(np.float32).reshape(L * S, K + 2).astype(np.float64)
        floats = raw[ends[1] : ends[2]].view(np.float32).reshape(p.floats.shape)
        words = raw[ends[2] : ends[3]].view(np.uint32).reshape(p.words.shape)
        readout = Readout(
            out[: L * S * D].reshape(L, S, D), out[L * S * D :].reshape(L, S), floats, words
        )
        return readout, PredictiveBatch(pred[:, :K], pred[:, K], pred[:, K + 1])
