"""A warm batch's whole sampler run as ONE dispatch, a workgroup per lane.

Same algorithm, state layout and read back as wgpu_sampler (whose `plan` it uses), but
recorded as a single dispatch of shaders/lane_sampler.py instead of one per leapfrog step,
and with each draw's predictive computed on the device beside it: the update's summary
needs no second submission. Runs where the HMM kernels have scan kernels on and the
window fits in workgroup memory (`fits`). On a CPU adapter (llvmpipe bounds an
invocation's loops) the run is split into several dispatches of one submission.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np

from gpu_backend.buffer_pool import cached_bind_group
from gpu_backend.pipeline_cache import HMM_BINDINGS, PipelineCache
from gpu_backend.returns_ring import ReturnsRing
from gpu_backend.run_summary import DeviceSummary, first_lanes
from gpu_backend.run_summary import usage as summary_usage
from gpu_backend.shaders.hmm import ENTRY_VALUE_GRAD
from gpu_backend.shaders.hmm_scan import TMAX, lane_threads_for, window_capacity
from gpu_backend.shaders.lane_sampler import (
    ENTRY_RUN,
    LANE_SAMPLER_BINDINGS,
    SUBGROUP_MARK,
    dispatch_starts,
    gradient_budget,
    lane_sampler_source,
)
from gpu_backend.shaders.sampler import U_IT
from gpu_backend.wgpu_kernels import (
    COMPILED_WINDOW,
    HmmKernels,
    Launch,
    lane_groups,
    params_bytes,
)
from gpu_backend.wgpu_sampler import (
    Plan,
    Readout,
    copy_back,
    plan,
    read_parts,
    read_state,
    sample_result,
    state_sizes,
    usage,
    write_state,
)
from regime_model.backend import UpdateBatch
from regime_model.sampler import SampleResult
from regime_model.types import FloatArray, IntArray, PredictiveBatch


class Prepared(NamedTuple):
    """A run recorded and its inputs written, waiting for its submission."""

    plan: Plan
    K: int
    readback: Any  # the buffer its results are copied to
    commands: Any  # the finished command buffer
    batch: UpdateBatch
    # each instrument's first lane (run_summary.first_lanes) where the run's summary pass
    # was recorded; None: no pass (no returns window)
    summarised: IntArray | None


class Finished(NamedTuple):
    """A run's read back: the sampler's state, each draw's predictive, and the summary's
    rows spread to the lanes (None where the run had no returns window)."""

    readout: Readout
    predictive: PredictiveBatch
    summary: FloatArray | None

    def result(self, batch: UpdateBatch, p: Plan, constant: float, ms: float) -> SampleResult:
        """The run as the host sampler's SampleResult, with what the device added."""
        out = sample_result(batch, p, self.readout, constant, ms)
        return out._replace(predictive=self.predictive, summary=self.summary)


_HMM_ROLES = ("params", "y", "theta", "value", "vec", "scratch")
_ROLES = ("s_params", "s_float", "s_word", "s_steps", "s_out", "s_pred", "s_ring", "s_scale",
          "s_rows")  # fmt: skip


def _usage() -> dict[str, int]:
    import wgpu  # noqa: PLC0415

    u = wgpu.BufferUsage
    return {
        **usage(),
        **summary_usage(),
        "s_pred": u.STORAGE | u.COPY_SRC,
        "s_ring": u.STORAGE | u.COPY_DST | u.COPY_SRC,  # read back by the tests
        "s_scale": u.STORAGE | u.COPY_DST,
        "s_rows": u.STORAGE | u.COPY_DST,
    }


class LaneSampler:
    """The warm sampler loop as one dispatch on the HMM kernels' device."""

    def __init__(
        self,
        hmm: HmmKernels,
        states: tuple[int, ...],
        lane_threads: int,
        subgroups: bool | None = None,
    ) -> None:
        self.hmm = hmm
        self.lane_threads = lane_threads  # a workgroup of these per lane (lane_threads.py)
        # The scan's rounds as shuffles where a lane's threads are one subgroup (None: where
        # the device's measured subgroup size is the lanes' threads): the kernel checks the
        # size it runs at (shaders/scan_rounds.py); the HMM kernels keep workgroup rounds.
        if subgroups is None:
            subgroups = hmm.device.info.subgroup_size == lane_threads
        self.subgroups = subgroups
        # llvmpipe ends an invocation's loops past its limit (shaders/lane_sampler.py): there
        # a run is split (its own module), on a GPU it is one dispatch
        self.bounded_loops = hmm.device.info.adapter_type == "CPU"
        # each bar's emission computed once per gradient where exponentials are dear (a CPU
        # adapter: lavapipe's warm runs 12-19 % shorter); a GPU computes it in each pass
        # over the chunk, where keeping it was slower (shaders/hmm_scan.py)
        self.keep_emissions = self.bounded_loops
        self.cache = PipelineCache(hmm.device.handle, HMM_BINDINGS, LANE_SAMPLER_BINDINGS)
        # A GPU compiles every K's module now; a CPU adapter, where the three take seconds
        # (lavapipe 4-5 s), the account's K's when its first warm batch runs.
        for K in () if self.bounded_loops else states:
            self.cache.get(self.source(K, COMPILED_WINDOW), K, lane_threads, ENTRY_RUN)
        self._usage = _usage()
        self._hmm_group: tuple[int, Any] | None = None  # (pool generation, bind group)
        self._own_group: tuple[int, Any] | None = None
        self.ring = ReturnsRing()
        # the wide module on a GPU only: on lavapipe its sorts of 2,048 draws took 120 ms a
        # trial account's run, against the host's 5.5 (docs/bench-results/summary_pass.py)
        self.summary = DeviceSummary(hmm.device.handle, states, wide=not self.bounded_loops)
        self.submissions = 0
        self.dispatches = 0

    def source(self, K: int, T: int) -> str:
        """The one-dispatch module for K states, sized for windows of T bars."""
        hmm = self.hmm
        return lane_sampler_source(K, self.lane_threads, hmm.workgroup, hmm.accumulate,
                                   window_capacity(T), self.bounded_loops, self.subgroups,
                                   self.keep_emissions)  # fmt: skip

    def budget(self, K: int, T: int, D: int) -> int:
        """Gradient evaluations per dispatch: no bound (0) on a GPU."""
        if not self.bounded_loops:
            return 0
        threads = lane_threads_for(K, self.lane_threads, window_capacity(T), self.subgroups)
        return gradient_budget(-(-T // threads), D)

    @staticmethod
    def fits(batch: UpdateBatch) -> bool:
        """Whether the window fits the workgroup's memory."""
        return int(batch.y.shape[1]) <= TMAX

    def run(self, batch: UpdateBatch, constant: float) -> SampleResult:
        """The batch's run; `constant`: what the kernels leave out of the log density."""
        t0 = time.perf_counter()
        p = plan(batch)
        done = self.hmm.guarded(lambda: self._run(batch, p))
        return done.result(batch, p, constant, 1e3 * (time.perf_counter() - t0))

    def _buffers(self, batch: UpdateBatch, p: Plan, y_tm: Any,
                 first: IntArray | None) -> dict[str, Any]:  # fmt: skip
        hmm, D, K, window = self.hmm, p.D, batch.n_states, batch.window
        buffers = hmm.buffers(Launch(ENTRY_VALUE_GRAD, K, y_tm, p.floats[:, :D], D))
        summary = self.summary.sizes(first, K, D, p.draws) if first is not None else {}
        readback = sum(n for _, n in read_parts(p)) + _pred_bytes(p, K) + summary.get("r_rows", 0)
        sizes = {
            **state_sizes(p),
            **summary,
            "s_pred": _pred_bytes(p, K),
            "s_ring": 4 * window.returns.size if window else 4,
            "s_scale": 4 * len(window.scale) if window else 4,
            "s_rows": 4 * (p.lanes // window.chains) if window else 4,
            "s_readback": readback,
        }
        cap = hmm.device.info.max_binding
        return {**buffers, **hmm.pool.take(sizes, self._usage, cap, "s_readback")}

    def _bind(self, buffers: dict[str, Any]) -> tuple[Any, Any]:
        generation, handle = self.hmm.pool.generation, self.hmm.device.handle
        layouts = self.cache.bind_group_layouts
        self._hmm_group = cached_bind_group(
            self._hmm_group, generation, handle, layouts[0], buffers, _HMM_ROLES
        )
        self._own_group = cached_bind_group(
            self._own_group, generation, handle, layouts[1], buffers, _ROLES
        )
        return self._hmm_group[1], self._own_group[1]

    def _run(self, batch: UpdateBatch, p: Plan) -> Finished:
        prepared = self.prepare(batch, p)
        self.hmm.device.handle.queue.submit([prepared.commands])
        return self.finish(prepared)

    def prepare(self, batch: UpdateBatch, p: Plan) -> Prepared:
        """The batch's inputs written to its buffers and its run recorded, not submitted:
        `run_in_one_submission` submits several samplers' runs together."""
        L, T, D, window = p.lanes, batch.y.shape[1], p.D, batch.window
        # With the batch's returns window, y is built on the device from the ring (an
        # extension block's instruments picked by `rows`); without it (a batch not of one
        # update), y is uploaded whole.
        if window is None:
            y_tm = np.ascontiguousarray(batch.y.T, dtype=np.float32)
        else:  # the pool sizes the kernels' y binding by its shape; nothing is written there
            y_tm = np.broadcast_to(np.float32(0.0), (T, L))
        # the summary's pass where the lanes are an update's instruments (a returns window)
        first = first_lanes(batch) if window is not None else None
        buffers = self._buffers(batch, p, y_tm, first)
        queue = self.hmm.device.handle.queue
        queue.write_buffer(buffers["params"], 0, params_bytes(L, T, D, batch.priors))
        ring = (0, 0, 0)
        if window is not None:
            generation = self.hmm.pool.generation
            head = self.ring.write(queue, buffers["s_ring"], buffers["s_scale"], window, generation)
            ring = (head, len(window.scale), window.chains)
            queue.write_buffer(buffers["s_rows"], 0, window.instruments().astype(np.uint32))
        else:
            self.hmm.write_y(buffers["y"], y_tm)
        K = batch.n_states
        budget = self.budget(K, T, D)
        write_state(queue, buffers, p, batch.config.target_accept, ring, budget)
        # each lane stops at its own schedule's budget: as many as the longest needs
        dispatches = max(len(dispatch_starts(row, p.shift, budget)) for row in p.steps)
        instruments = 0 if first is None else self.summary.write(
            queue, buffers, first, p.draws, self.hmm.pool.generation)
        commands = self._encode(buffers, K, T, p, dispatches, instruments)
        self.submissions += 1
        self.dispatches += dispatches + (self.summary.passes if instruments else 0)
        return Prepared(p, K, buffers["s_readback"], commands, batch, first)

    def finish(self, prepared: Prepared) -> Finished:
        """A submitted run's read back, checked: the draws, each draw's predictive and the
        summary's rows."""
        p, K, first = prepared.plan, prepared.K, prepared.summarised
        L, pred_bytes = p.lanes, _pred_bytes(p, K)
        rows = 0 if first is None else DeviceSummary.rows_bytes(len(first) - 1, K, p.D)
        readout, raw = read_state(self.hmm, prepared.readback, p, pred_bytes + rows)
        ended = readout.words[:, U_IT]
        if L and (ended >= SUBGROUP_MARK).any():
            self.subgroups = False  # the next run's module: workgroup rounds
            raise RuntimeError(
                f"the one-dispatch sampler ran in subgroups of {int(ended.max()) & 0xFFFF} "
                f"threads on {self.hmm.device.info.adapter!r}, not the lane's "
                f"{self.lane_threads} its shuffles need; its lanes stopped unrun, and "
                "later runs use workgroup memory instead"
            )
        if L and (ended != p.warmup + p.draws).any():
            raise RuntimeError(
                f"the one-dispatch sampler stopped at iteration {int(ended.min())} of "
                f"{p.warmup + p.draws} on {self.hmm.device.info.adapter!r}: the driver ended "
                "its loops early (as llvmpipe does past 65,535 loop iterations, for which runs "
                "on a CPU adapter are split); its draws are not used"
            )
        pred = raw[:pred_bytes].view(np.float32).reshape(L * p.draws, K + 2).astype(np.float64)
        summary = (None if first is None
                   else DeviceSummary.lane_rows(raw[pred_bytes:], first, K, p.D))  # fmt: skip
        return Finished(readout, PredictiveBatch(pred[:, :K], pred[:, K], pred[:, K + 1]), summary)

    def _encode(self, buffers: dict[str, Any], K: int, T: int, p: Plan, dispatches: int,
                instruments: int) -> Any:  # fmt: skip
        hmm = self.hmm
        pipeline = self.cache.get(self.source(K, T), K, self.lane_threads, ENTRY_RUN)
        group0, group1 = self._bind(buffers)
        encoder = hmm.device.handle.create_command_encoder()
        compute = encoder.begin_compute_pass(timestamp_writes=hmm.timestamp_writes())
        compute.set_pipeline(pipeline)
        compute.set_bind_group(0, group0)
        compute.set_bind_group(1, group1)
        for _ in range(dispatches):  # each goes on from the lanes' iteration count
            compute.dispatch_workgroups(*lane_groups(p.lanes))
        compute.end()
        parts = [*read_parts(p), ("s_pred", _pred_bytes(p, K))]
        if instruments:
            self.summary.encode(encoder, buffers, hmm.pool.generation, K, instruments)
            parts.append(("r_rows", DeviceSummary.rows_bytes(instruments, K, p.D)))
        copy_back(hmm, encoder, buffers, parts)
        return encoder.finish()


def _pred_bytes(p: Plan, K: int) -> int:
    """Each draw's predictive: P(regime) [K], the next return's mean and variance."""
    return 4 * p.lanes * p.draws * (K + 2)
