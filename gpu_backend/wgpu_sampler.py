"""A warm batch's whole sampler run in ONE submission with ONE read back.

regime_model.sampler's loop for lanes that all warm-start (no metric windows, the same
warm-up length, "jitter" trajectories): the warm-up's dual-averaging iterations, then the
draws, every iteration's momentum, leapfrog steps, Metropolis test and bookkeeping on the
device (shaders/sampler.py over shaders/hmm.py's value_grad), recorded into one compute
pass. The host computes only what is batch-wide and tiny: each iteration's leapfrog step
count (the schedule stream, shared by all lanes) and the dual-averaging start. The read
back is the draws, their energies, and per lane the adapted step size, the summed
acceptance and the divergence count. Shares the HMM kernels' pool and pipelines.
"""

from __future__ import annotations

import struct
import time
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from gpu_backend.buffer_pool import cached_bind_group, read_back
from gpu_backend.pipeline_cache import PipelineCache
from gpu_backend.shaders import sampler as shader
from gpu_backend.shaders.hmm import ENTRY_VALUE_GRAD
from gpu_backend.wgpu_kernels import F32, HmmKernels, Launch, params_bytes
from regime_model.backend import UpdateBatch
from regime_model.batch_join import schedule_steps
from regime_model.params import n_params
from regime_model.sampler import SampleResult

_ROLES = ("s_params", "theta", "value", "vec", "s_float", "s_word", "s_steps", "s_out")


def usage() -> dict[str, int]:
    """Buffer usages of the sampler's roles (the one-dispatch sampler adds its own)."""
    import wgpu  # noqa: PLC0415

    u = wgpu.BufferUsage
    storage = u.STORAGE | u.COPY_DST | u.COPY_SRC
    return {
        "s_params": u.UNIFORM | u.COPY_DST,
        "s_float": storage,
        "s_word": storage,
        "s_steps": u.STORAGE | u.COPY_DST,
        "s_out": u.STORAGE | u.COPY_SRC,
        "s_readback": u.MAP_READ | u.COPY_DST,
    }


def fits(batch: UpdateBatch) -> str | None:
    """Why this batch cannot run as one device submission, or None when it can."""
    start, cfg = batch.start, batch.config
    if cfg.trajectory != "jitter":
        return f"trajectory {cfg.trajectory!r} (only 'jitter' runs on the device)"
    if start.adapt_mass.any():
        return "cold lanes (metric adaptation runs on the host)"
    if len(start.warmup) and (start.warmup != start.warmup[0]).any():
        return "lanes with different warm-up lengths"
    return None


class Plan(NamedTuple):
    """What the host prepares: the lanes' packed state and the iterations' step counts."""

    lanes: int
    D: int
    warmup: int
    draws: int
    floats: F32  # [L, 4 D + N_SCALARS]
    words: np.ndarray  # [L, N_WORDS] uint32
    steps: np.ndarray  # [schedules, warmup + draws] uint32: one row but in a joined batch
    shift: bool  # the level-shift move before every iteration


def plan(batch: UpdateBatch) -> Plan:
    start, cfg = batch.start, batch.config
    L, D = start.position.shape
    W = int(start.warmup[0]) if L else 0
    floats = np.zeros((L, 4 * D + shader.N_SCALARS), dtype=np.float32)
    floats[:, :D] = start.position
    floats[:, 3 * D : 4 * D] = start.inv_mass
    scalars = floats[:, 4 * D :]
    scalars[:, shader.F_EPS] = start.step_size
    scalars[:, shader.F_LOG_STEP] = np.log(np.asarray(start.step_size, dtype=np.float64))
    words = np.zeros((L, shader.N_WORDS), dtype=np.uint32)
    words[:, :2], words[:, 2:4] = batch.stream.key, batch.stream.high
    steps, words[:, shader.U_SCHEDULE] = schedule_steps(batch, np.arange(-W, cfg.draws))
    steps = steps.astype(np.uint32)
    return Plan(L, D, W, cfg.draws, floats, words, steps, cfg.shift_moves)


class Readout(NamedTuple):
    draws: F32  # [L, S, D]
    energy: F32  # [L, S] less the density's constant
    floats: F32  # [L, 4 D + N_SCALARS] the final state
    words: np.ndarray  # [L, N_WORDS]


class DeviceSampler:
    """The warm sampler loop on the HMM kernels' device."""

    def __init__(self, hmm: HmmKernels) -> None:
        self.hmm = hmm
        self.cache = PipelineCache(hmm.device.handle, shader.SAMPLER_BINDINGS)
        self._source = shader.sampler_source(hmm.workgroup)
        for entry in shader.ENTRIES:
            self.cache.get(self._source, 0, hmm.workgroup, entry)
        self._usage = usage()
        self._group: tuple[int, Any] | None = None
        self.submissions = 0  # one per run

    def holds(self, batch: UpdateBatch) -> bool:
        """Whether one dispatch (hence one run) holds every lane of the batch."""
        K, (L, T) = batch.n_states, batch.y.shape
        return self.hmm.max_lanes(K, int(T), n_params(K)) >= int(L)

    def run(self, batch: UpdateBatch, constant: float) -> SampleResult:
        """The batch's run; `constant`: what the kernels leave out of the log density."""
        t0 = time.perf_counter()
        p = plan(batch)
        out = self.hmm.guarded(lambda: self._run(batch, p))
        return sample_result(batch, p, out, constant, 1e3 * (time.perf_counter() - t0))

    def _buffers(self, batch: UpdateBatch, p: Plan, y_tm: F32) -> dict[str, Any]:
        hmm, D = self.hmm, p.D
        buffers = hmm.buffers(Launch(ENTRY_VALUE_GRAD, batch.n_states, y_tm, p.floats[:, :D], D))
        sizes = {**state_sizes(p), "s_readback": sum(n for _, n in read_parts(p))}
        cap = hmm.device.info.max_binding
        return {**buffers, **hmm.pool.take(sizes, self._usage, cap, "s_readback")}

    def _bind(self, buffers: dict[str, Any]) -> Any:
        self._group = cached_bind_group(
            self._group, self.hmm.pool.generation, self.hmm.device.handle,
            self.cache.bind_group_layout, buffers, _ROLES,
        )
        return self._group[1]

    def _run(self, batch: UpdateBatch, p: Plan) -> Readout:
        L, T, D = p.lanes, batch.y.shape[1], p.D
        y_tm = np.ascontiguousarray(batch.y.T, dtype=np.float32)
        buffers = self._buffers(batch, p, y_tm)
        queue = self.hmm.device.handle.queue
        queue.write_buffer(buffers["params"], 0, params_bytes(L, T, D, batch.priors))
        self.hmm.write_y(buffers["y"], y_tm)
        write_state(queue, buffers, p, batch.config.target_accept)
        queue.submit([self._encode(buffers, batch.n_states, T, p)])
        self.submissions += 1
        return read_state(self.hmm, buffers["s_readback"], p)[0]

    def _encode(self, buffers: dict[str, Any], K: int, T: int, p: Plan) -> Any:
        hmm = self.hmm
        value_grad = hmm.kernel(ENTRY_VALUE_GRAD, K, T, p.lanes)
        hmm_group, s_group = hmm.bind_group(buffers), self._bind(buffers)
        kernels = {e: self.cache.get(self._source, 0, hmm.workgroup, e) for e in shader.ENTRIES}
        groups = -(-p.lanes // hmm.workgroup)
        encoder = hmm.device.handle.create_command_encoder()
        compute = encoder.begin_compute_pass(timestamp_writes=hmm.timestamp_writes())

        def dispatch(pipeline: Any, group: Any, size: tuple[int, int] = (groups, 1)) -> None:
            compute.set_pipeline(pipeline)
            compute.set_bind_group(0, group)
            compute.dispatch_workgroups(*size)

        dispatch(value_grad.pipeline, hmm_group, value_grad.groups)
        dispatch(kernels[shader.ENTRY_INIT], s_group)
        for n in p.steps.max(axis=0):  # a lane past its own steps skips drift and kick
            if p.shift:
                dispatch(kernels[shader.ENTRY_JUMP_PROPOSE], s_group)
                dispatch(value_grad.pipeline, hmm_group, value_grad.groups)
                dispatch(kernels[shader.ENTRY_JUMP_FINISH], s_group)
            dispatch(kernels[shader.ENTRY_BEGIN], s_group)
            for _ in range(int(n)):
                dispatch(kernels[shader.ENTRY_DRIFT], s_group)
                dispatch(value_grad.pipeline, hmm_group, value_grad.groups)
                dispatch(kernels[shader.ENTRY_KICK], s_group)
            dispatch(kernels[shader.ENTRY_FINISH], s_group)
        compute.end()
        copy_back(hmm, encoder, buffers, read_parts(p))
        return encoder.finish()


# What both device samplers share: the run's state on the device and its read back.


def state_sizes(p: Plan) -> dict[str, int]:
    """Bytes of the sampler's own roles for plan p."""
    return {
        "s_params": 48,
        "s_float": p.floats.nbytes,
        "s_word": p.words.nbytes,
        "s_steps": p.steps.nbytes,
        "s_out": 4 * p.lanes * p.draws * (p.D + 1),
    }


def write_state(
    queue: Any,
    buffers: dict[str, Any],
    p: Plan,
    target: float,
    ring: tuple[int, ...] = (0, 0, 0),
    budget: int = 0,
) -> None:
    """The run's uniform (`ring`: the one-dispatch sampler's head, instruments, chains;
    `budget`: its gradient evaluations per dispatch, 0 for no bound), the starting
    position and the lanes' state and step counts."""
    sp = struct.pack(
        "4If7I", p.lanes, p.D, p.warmup, p.draws, target, *ring, p.shift, budget, 0, 0
    )
    queue.write_buffer(buffers["s_params"], 0, sp)
    queue.write_buffer(buffers["theta"], 0, np.ascontiguousarray(p.floats[:, : p.D]))
    for role, data in (("s_float", p.floats), ("s_word", p.words), ("s_steps", p.steps)):
        queue.write_buffer(buffers[role], 0, data)


def read_parts(p: Plan) -> list[tuple[str, int]]:
    """What a run reads back, in order: draws and energies, the lanes' final state."""
    return [
        ("s_out", 4 * p.lanes * p.draws * (p.D + 1)),
        ("s_float", p.floats.nbytes),
        ("s_word", p.words.nbytes),
    ]


def copy_back(
    hmm: HmmKernels, encoder: Any, buffers: dict[str, Any], parts: list[tuple[str, int]]
) -> None:
    """Records the copies of `parts` (then the timestamps, when profiling) into s_readback."""
    out, offset = buffers["s_readback"], 0
    for role, n in parts:
        encoder.copy_buffer_to_buffer(buffers[role], 0, out, offset, n)
        offset += n
    if hmm.queries is not None:
        encoder.resolve_query_set(hmm.queries, 0, 2, buffers["query"], 0)
        encoder.copy_buffer_to_buffer(buffers["query"], 0, out, offset, 16)


def read_state(
    hmm: HmmKernels, readback: Any, p: Plan, extra: int = 0
) -> tuple[Readout, npt.NDArray[np.uint8]]:
    """The read back of `read_parts(p)` and `extra` bytes after them (returned raw)."""
    L, D, S = p.lanes, p.D, p.draws
    stamps = 16 if hmm.queries is not None else 0
    ends = np.cumsum([n for _, n in read_parts(p)] + [extra])
    raw = read_back(readback, int(ends[-1]) + stamps)
    if stamps:
        begin, end = raw[-16:].view(np.uint64)
        hmm.gpu_ns += int(end - begin)
    out = raw[: ends[0]].view(np.float32)
    floats = raw[ends[0] : ends[1]].view(np.float32).reshape(p.floats.shape)
    words = raw[ends[1] : ends[2]].view(np.uint32).reshape(p.words.shape)
    draws, energy = out[: L * S * D].reshape(L, S, D), out[L * S * D :].reshape(L, S)
    return Readout(draws, energy, floats, words), raw[ends[2] : ends[3]]


def sample_result(
    batch: UpdateBatch, p: Plan, out: Readout, const: float, ms: float
) -> SampleResult:
    """The device's read back as the host sampler's SampleResult (float64)."""
    D, S = p.D, max(p.draws, 1)
    scalars = out.floats[:, 4 * D :].astype(np.float64)
    step = scalars[:, shader.F_EPS]
    sampled = p.steps[:, p.warmup :].astype(np.float64)
    per_schedule = sampled.mean(axis=1) if sampled.shape[1] else np.zeros(len(sampled))
    mean_steps = per_schedule[out.words[:, shader.U_SCHEDULE]]
    # batched calls: the longest schedule's (a joined batch's lanes run side by side)
    calls = int(p.steps.sum(axis=1).max()) + p.shift * p.steps.shape[1]
    return SampleResult(
        draws=out.draws.astype(np.float64),
        divergences=out.words[:, shader.U_DIVERGENT].astype(np.int64),
        acceptance=scalars[:, shader.F_ACC_SUM] / S,
        step_size=step,
        inv_mass=np.asarray(batch.start.inv_mass, dtype=np.float64).copy(),
        gradient_evals=1 + calls,
        timings_ms={"device_update": ms},
        energy=out.energy.astype(np.float64) - const,
        trajectory_length=mean_steps * step,
        mean_steps=mean_steps,
        shift_rate=scalars[:, shader.F_SHIFT_SUM] / S if p.shift else None,
    )
