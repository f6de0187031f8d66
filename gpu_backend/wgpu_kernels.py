"""Running the HMM kernels: upload, one dispatch over all lanes, one read back.

The caller packs arrays (time-major y [T, L] float32, theta [L, D] float32); this module
owns the device-side plumbing: the pipeline cache, the buffer pool, bind groups cached
per pool generation, optional timestamp queries, and turning wgpu errors into
GpuCallError. Nothing is created per call once the pool has grown to the call's size.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from gpu_backend.buffer_pool import BufferPool, read_back
from gpu_backend.pipeline_cache import PipelineCache
from gpu_backend.shaders.accumulate import Accumulate
from gpu_backend.shaders.hmm import ENTRY_PREDICTIVE, ENTRY_VALUE_GRAD, hmm_source
from gpu_backend.shaders.hmm_scan import (
    ENTRY_PREDICTIVE_SCAN,
    ENTRY_VALUE_GRAD_SCAN,
    SCAN_ENTRIES,
    TMAX,
    scan_source,
    window_capacity,
)
from gpu_backend.wgpu_device import Device, GpuCallError
from regime_model.types import Priors

F32 = npt.NDArray[np.float32]
ENTRIES = (ENTRY_VALUE_GRAD, ENTRY_PREDICTIVE)
_SCAN_OF = {ENTRY_VALUE_GRAD: ENTRY_VALUE_GRAD_SCAN, ENTRY_PREDICTIVE: ENTRY_PREDICTIVE_SCAN}
_MAX_GROUPS = 65_535
PARAMS_BYTES = 64  # shaders/hmm.py's Params: 16 words
# The window whose kernels a backend compiles at start (ModelSpec's default, the trial's);
# a batch of another window compiles its own on first use (hmm_scan.window_capacity).
COMPILED_WINDOW = 256
R = TypeVar("R")


class Launch(NamedTuple):
    entry: str
    K: int
    y_tm: F32  # [T, L / per_row]
    theta: F32  # [L, D]
    width: int  # floats per lane in out_vec
    per_row: int = 1  # lane l reads column l // per_row of y_tm


class Kernel(NamedTuple):
    """A pipeline and the workgroups that cover a call's lanes."""

    pipeline: Any
    groups: tuple[int, int]


class Result(NamedTuple):
    value: F32  # [L, 2] (hi, lo) of the accumulated sum
    vec: F32  # [L, width]


def _usage() -> dict[str, int]:
    import wgpu  # noqa: PLC0415

    u = wgpu.BufferUsage
    return {
        "params": u.UNIFORM | u.COPY_DST,
        "y": u.STORAGE | u.COPY_DST,
        "theta": u.STORAGE | u.COPY_DST | u.COPY_SRC,
        "value": u.STORAGE | u.COPY_SRC,
        "vec": u.STORAGE | u.COPY_SRC,
        "scratch": u.STORAGE,
        "readback": u.MAP_READ | u.COPY_DST,
        "lf_readback": u.MAP_READ | u.COPY_DST,
        "lf_params": u.UNIFORM | u.COPY_DST,
        "momentum": u.STORAGE | u.COPY_DST | u.COPY_SRC,
        "drift": u.STORAGE | u.COPY_DST,
        "lane": u.STORAGE | u.COPY_DST,
        "taken": u.STORAGE | u.COPY_DST,
        "query": u.QUERY_RESOLVE | u.COPY_SRC,
    }


def lane_groups(lanes: int) -> tuple[int, int]:
    """Workgroups for a workgroup per lane: a row of at most 65,535, as many rows as needed
    (the kernels number lanes as wid.y * groups.x + wid.x)."""
    wide = max(1, min(lanes, _MAX_GROUPS))
    return wide, -(-lanes // wide)


def params_bytes(lanes: int, T: int, D: int, priors: Priors, per_row: int = 1) -> bytes:
    """shaders/hmm.py's Params: y holds ceil(lanes / per_row) columns."""
    return struct.pack(
        "4I8f4I", lanes, T, D, 0,
        priors.mu_loc, priors.mu_scale, priors.log_sigma_loc, priors.log_sigma_scale,
        priors.eta_loc, priors.eta_scale, priors.alpha_stay, priors.alpha_move,
        per_row, -(-lanes // per_row), 0, 0,
    )  # fmt: skip


@functools.cache
def hmm_module(
    K: int, workgroup: int, accumulate: Accumulate, lane_threads: int, capacity: int
) -> str:
    """The HMM module's source: shaders/hmm.py's kernels, and the scan kernels for windows
    of up to `capacity` bars where lanes have threads (built once per argument set)."""
    scan = scan_source(K, lane_threads, capacity) if lane_threads else ""
    return hmm_source(K, workgroup, accumulate) + scan


class HmmKernels:
    """Every HMM kernel variant for `states`, compiled at construction."""

    def __init__(
        self,
        device: Device,
        states: tuple[int, ...],
        workgroup: int,
        accumulate: Accumulate,
        profile: bool,
        lane_threads: int = 0,
    ) -> None:
        self.device = device
        self.workgroup = workgroup
        self.accumulate = accumulate
        # Threads per lane of the scan kernels (shaders/hmm_scan.py); 0: one thread per lane.
        self.lane_threads = lane_threads
        self.cache = PipelineCache(device.handle)
        self.pool = BufferPool(device.handle)
        self.usage = _usage()
        entries = ENTRIES + (SCAN_ENTRIES if lane_threads else ())
        for K in states:
            for entry in entries:
                self.cache.get(self.source(K, COMPILED_WINDOW), K, workgroup, entry)
        self._bind_group: tuple[int, Any] | None = None
        self.queries = self._query_set() if profile else None
        self.gpu_ns = 0  # accumulated kernel time from timestamp queries (when profiling)
        self.fault: str | None = None  # test hook: the next run fails with this reason
        self._y_written: tuple[int, F32] | None = None  # (pool generation, y_tm in "y")

    def write_y(self, buffer: Any, y_tm: F32) -> None:
        """Upload y_tm unless this very array is still in the buffer (same pool generation)."""
        written = self._y_written
        if written is None or written[0] != self.pool.generation or written[1] is not y_tm:
            self.device.handle.queue.write_buffer(buffer, 0, y_tm)
            self._y_written = (self.pool.generation, y_tm)

    def _query_set(self) -> Any:
        if "timestamp-query" not in self.device.info.features:
            return None
        return self.device.handle.create_query_set(type="timestamp", count=2)

    def source(self, K: int, T: int) -> str:
        """The HMM module for K states and windows of T bars: its scan kernels sized for
        them (hmm_scan.window_capacity), one module per capacity."""
        capacity = window_capacity(T) if self.scans(T) else TMAX
        return hmm_module(K, self.workgroup, self.accumulate, self.lane_threads, capacity)

    def scans(self, T: int) -> bool:
        """Whether lanes of T bars run the workgroup-per-lane scan kernels."""
        return bool(self.lane_threads) and T <= TMAX

    def kernel(self, entry: str, K: int, T: int, lanes: int) -> Kernel:
        """The kernel that runs `entry` for lanes of T bars: a workgroup per lane where the
        window fits in workgroup memory and scan kernels are on, else a thread per lane."""
        if self.scans(T):
            pipeline = self.cache.get(self.source(K, T), K, self.workgroup, _SCAN_OF[entry])
            return Kernel(pipeline, lane_groups(lanes))
        pipeline = self.cache.get(self.source(K, T), K, self.workgroup, entry)
        return Kernel(pipeline, (-(-lanes // self.workgroup), 1))

    def max_lanes(self, K: int, T: int, width: int) -> int:
        """Lanes per dispatch that keep every binding within the adapter's limits."""
        per_lane = 4 * max(T * K, T, width, 2)
        limit = min(self.device.info.max_binding, self.device.info.max_buffer)
        return max(1, min(limit // per_lane, _MAX_GROUPS * self.workgroup))

    def run(self, launch: Launch, priors: Priors) -> Result:
        return self.guarded(lambda: self._run(launch, priors))

    def guarded(self, call: Callable[[], R]) -> R:
        """call() with wgpu failures (and an injected fault) raised as GpuCallError."""
        import wgpu  # noqa: PLC0415

        try:
            if self.fault is not None:
                reason, self.fault = self.fault, None
                raise wgpu.GPUError(reason)
            result = call()
        except (wgpu.GPUError, RuntimeError) as error:
            # RuntimeError: wgpu-native reports a lost parent device this way
            raise GpuCallError(f"{type(error).__name__}: {error}") from error
        self.device.check()
        return result

    def buffers(self, launch: Launch) -> dict[str, Any]:
        T, L = len(launch.y_tm), len(launch.theta)
        cap = self.device.info.max_binding
        sizes = {
            "params": PARAMS_BYTES,
            "y": launch.y_tm.nbytes,
            "theta": launch.theta.nbytes,
            "value": 8 * L,
            "vec": 4 * L * launch.width,
            # The thread-per-lane gradient's filtered messages; a scan kernel keeps its
            # chunk's in each thread's own array (shaders/hmm_scan.py), so 4 bytes bind it.
            "scratch": 4 * T * launch.K * L
            if launch.entry == ENTRY_VALUE_GRAD and not self.scans(T) else 4,
            "readback": 8 * L + 4 * L * launch.width + 16,
            "query": 16,
        }
        return self.pool.take(sizes, self.usage, cap, "readback")

    def bind_group(self, buffers: dict[str, Any]) -> Any:
        generation = self.pool.generation
        if self._bind_group is None or self._bind_group[0] != generation:
            roles = ("params", "y", "theta", "value", "vec", "scratch")
            group = self.device.handle.create_bind_group(
                layout=self.cache.bind_group_layout,
                entries=[
                    {"binding": i, "resource": {"buffer": buffers[r], "offset": 0}}
                    for i, r in enumerate(roles)
                ],
            )
            self._bind_group = (generation, group)
        return self._bind_group[1]

    def _run(self, launch: Launch, priors: Priors) -> Result:
        T, L = len(launch.y_tm), len(launch.theta)
        buffers = self.buffers(launch)
        queue = self.device.handle.queue
        D = launch.theta.shape[1]
        queue.write_buffer(buffers["params"], 0, params_bytes(L, T, D, priors, launch.per_row))
        self.write_y(buffers["y"], launch.y_tm)
        queue.write_buffer(buffers["theta"], 0, launch.theta)
        kernel = self.kernel(launch.entry, launch.K, T, L)
        queue.submit([self._encode(kernel, buffers, L, launch.width)])
        return self._read(buffers["readback"], L, launch.width)

    def _encode(self, kernel: Kernel, buffers: dict[str, Any], L: int, width: int) -> Any:
        encoder = self.device.handle.create_command_encoder()
        compute = encoder.begin_compute_pass(timestamp_writes=self.timestamp_writes())
        compute.set_pipeline(kernel.pipeline)
        compute.set_bind_group(0, self.bind_group(buffers))
        compute.dispatch_workgroups(*kernel.groups)
        compute.end()
        out = buffers["readback"]
        encoder.copy_buffer_to_buffer(buffers["value"], 0, out, 0, 8 * L)
        encoder.copy_buffer_to_buffer(buffers["vec"], 0, out, 8 * L, 4 * L * width)
        if self.queries is not None:
            encoder.resolve_query_set(self.queries, 0, 2, buffers["query"], 0)
            encoder.copy_buffer_to_buffer(buffers["query"], 0, out, 8 * L + 4 * L * width, 16)
        return encoder.finish()

    def timestamp_writes(self) -> dict[str, Any] | None:
        """A compute pass's begin and end timestamps when profiling, else None."""
        if self.queries is None:
            return None
        return {
            "query_set": self.queries,
            "beginning_of_pass_write_index": 0,
            "end_of_pass_write_index": 1,
        }

    def _read(self, readback: Any, L: int, width: int) -> Result:
        nbytes = 8 * L + 4 * L * width + 16
        raw = read_back(readback, nbytes)
        if self.queries is not None:
            begin, end = raw[-16:].view(np.uint64)
            self.gpu_ns += int(end - begin)  # ticks are ns on Vulkan (timestampPeriod 1)
        value = raw[: 8 * L].view(np.float32).reshape(L, 2)
        vec = raw[8 * L : 8 * L + 4 * L * width].view(np.float32).reshape(L, width)
        return Result(value, vec)
