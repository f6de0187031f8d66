"""A whole leapfrog trajectory in one submission: drift, value_grad, kick, ... in one pass.

The HMM kernels (wgpu_kernels) evaluate one gradient per submission; here the position
(theta), momentum and gradient stay in device buffers for the `steps` leapfrog steps of a
trajectory, every step is three dispatches of ONE compute pass (shaders/leapfrog.py's
drift and kick around shaders/hmm.py's value_grad), and one read back returns the end
point: theta, momentum, log density (hi, lo) and gradient. Shares the HMM kernels' pool,
so in steady state nothing is created.
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from gpu_backend.buffer_pool import cached_bind_group, read_back
from gpu_backend.pipeline_cache import PipelineCache
from gpu_backend.shaders.hmm import ENTRY_VALUE_GRAD
from gpu_backend.shaders.leapfrog import (
    ENTRY_DRIFT,
    ENTRY_KICK,
    ENTRY_OPEN_KICK,
    LEAPFROG_BINDINGS,
    leapfrog_source,
)
from gpu_backend.wgpu_kernels import F32, HmmKernels, Launch, params_bytes
from regime_model.types import Priors

U32 = npt.NDArray[np.uint32]
_ROLES = ("lf_params", "theta", "momentum", "vec", "drift", "lane", "taken")


class Start(NamedTuple):
    """One trajectory's inputs for L lanes, packed for the device."""

    K: int
    y_tm: F32  # [T, L]
    theta: F32  # [L, D]
    momentum: F32  # [L, D] after the opening half kick
    drift: F32  # [L, D] step size x inverse mass
    lane: U32  # [L, 2] (bits of the f32 step size, leapfrog steps)


class End(NamedTuple):
    value: F32  # [L, 2] (hi, lo) of the log density less its constant
    theta: F32  # [L, D]
    momentum: F32  # [L, D]
    grad: F32  # [L, D]
    # With `opening`: the log density (hi, lo) and gradient at the start of the lanes from
    # `opening` on, [L - opening, 2] and [L - opening, D]
    start_value: F32 | None = None
    start_grad: F32 | None = None


class LeapfrogKernels:
    def __init__(self, hmm: HmmKernels) -> None:
        self.hmm = hmm
        self.cache = PipelineCache(hmm.device.handle, LEAPFROG_BINDINGS)
        self._source = leapfrog_source(hmm.workgroup)
        for entry in (ENTRY_DRIFT, ENTRY_KICK, ENTRY_OPEN_KICK):
            self.cache.get(self._source, 0, hmm.workgroup, entry)
        self._group: tuple[int, Any] | None = None

    def run(self, start: Start, priors: Priors, opening: int | None = None) -> End:
        """The trajectories of `start`; `opening`: the lanes from there on enter with their
        momentum not yet half-kicked, and the device kicks them with the gradient at their
        start (one value_grad before the steps, in the same submission)."""
        return self.hmm.guarded(lambda: self._run(start, priors, opening))

    def _buffers(self, start: Start, opened: int) -> dict[str, Any]:
        hmm = self.hmm
        L, D = start.theta.shape
        buffers = hmm.buffers(Launch(ENTRY_VALUE_GRAD, start.K, start.y_tm, start.theta, D))
        cap = hmm.device.info.max_binding
        sizes = {
            "lf_params": 16,
            "momentum": 4 * L * D,
            "drift": 4 * L * D,
            "lane": 8 * L,
            "taken": 4 * L,
            "lf_readback": _readback_bytes(L, D, opened),
        }
        return {**buffers, **hmm.pool.take(sizes, hmm.usage, cap, "lf_readback")}

    def _bind(self, buffers: dict[str, Any]) -> Any:
        self._group = cached_bind_group(
            self._group, self.hmm.pool.generation, self.hmm.device.handle,
            self.cache.bind_group_layout, buffers, _ROLES,
        )
        return self._group[1]

    def _run(self, start: Start, priors: Priors, opening: int | None) -> End:
        T, L = start.y_tm.shape
        D = start.theta.shape[1]
        first_open = L if opening is None else opening
        buffers = self._buffers(start, L - first_open)
        queue = self.hmm.device.handle.queue
        queue.write_buffer(buffers["params"], 0, params_bytes(L, T, D, priors))
        queue.write_buffer(buffers["lf_params"], 0, struct.pack("4I", L, D, first_open, 0))
        self.hmm.write_y(buffers["y"], start.y_tm)
        for role, data in (
            ("theta", start.theta),
            ("momentum", start.momentum),
            ("drift", start.drift),
            ("lane", start.lane),
            ("taken", np.zeros(L, np.uint32)),
        ):
            queue.write_buffer(buffers[role], 0, data)
        steps = int(start.lane[:, 1].max(initial=0))
        queue.submit([self._encode(buffers, start, steps, first_open)])
        return self._read(buffers["lf_readback"], L, D, L - first_open)

    def _encode(self, buffers: dict[str, Any], start: Start, steps: int, first_open: int) -> Any:
        hmm = self.hmm
        L, D = start.theta.shape
        value_grad = hmm.kernel(ENTRY_VALUE_GRAD, start.K, start.y_tm.shape[0], L)
        drift = self.cache.get(self._source, 0, hmm.workgroup, ENTRY_DRIFT)
        kick = self.cache.get(self._source, 0, hmm.workgroup, ENTRY_KICK)
        hmm_group, lf_group = hmm.bind_group(buffers), self._bind(buffers)
        encoder = hmm.device.handle.create_command_encoder()
        lane_groups = (-(-L // hmm.workgroup), 1)
        out, opened = buffers["lf_readback"], L - first_open
        tail = 8 * L + 12 * L * D  # the start's figures go after the end's
        if opened:  # the gradient at the lanes' start, their opening half kick, kept aside
            opening = encoder.begin_compute_pass()
            kick_open = self.cache.get(self._source, 0, hmm.workgroup, ENTRY_OPEN_KICK)
            for pipeline, group, groups in (
                (value_grad.pipeline, hmm_group, value_grad.groups),
                (kick_open, lf_group, lane_groups),
            ):
                opening.set_pipeline(pipeline)
                opening.set_bind_group(0, group)
                opening.dispatch_workgroups(*groups)
            opening.end()
            encoder.copy_buffer_to_buffer(buffers["value"], 8 * first_open, out, tail, 8 * opened)
            encoder.copy_buffer_to_buffer(buffers["vec"], 4 * first_open * D, out,
                                          tail + 8 * opened, 4 * opened * D)  # fmt: skip
        compute = encoder.begin_compute_pass(timestamp_writes=hmm.timestamp_writes())
        passes = (
            (drift, lf_group, lane_groups),
            (value_grad.pipeline, hmm_group, value_grad.groups),
            (kick, lf_group, lane_groups),
        )
        for _ in range(steps):
            for pipeline, group, groups in passes:
                compute.set_pipeline(pipeline)
                compute.set_bind_group(0, group)
                compute.dispatch_workgroups(*groups)
        compute.end()
        offset = 0
        for role, n in (("value", 8 * L), ("theta", 4 * L * D), ("momentum", 4 * L * D),
                        ("vec", 4 * L * D)):  # fmt: skip
            encoder.copy_buffer_to_buffer(buffers[role], 0, out, offset, n)
            offset += n
        if hmm.queries is not None:
            stamps = _readback_bytes(L, D, opened) - 16
            encoder.resolve_query_set(hmm.queries, 0, 2, buffers["query"], 0)
            encoder.copy_buffer_to_buffer(buffers["query"], 0, out, stamps, 16)
        return encoder.finish()

    def _read(self, readback: Any, L: int, D: int, opened: int) -> End:
        raw = read_back(readback, _readback_bytes(L, D, opened))
        if self.hmm.queries is not None:
            begin, end = raw[-16:].view(np.uint64)
            self.hmm.gpu_ns += int(end - begin)
        words = raw[:-16].view(np.float32)
        value = words[: 2 * L].reshape(L, 2)
        theta, momentum, grad = words[2 * L : 2 * L + 3 * L * D].reshape(3, L, D)
        if not opened:
            return End(value, theta, momentum, grad)
        rest = words[2 * L + 3 * L * D :]
        start_value = rest[: 2 * opened].reshape(opened, 2)
        return End(value, theta, momentum, grad, start_value, rest[2 * opened :].reshape(opened, D))


def _readback_bytes(L: int, D: int, opened: int) -> int:
    """The end's value, theta, momentum and gradient, the opened lanes' start value and
    gradient, then 16 bytes of timestamps."""
    return 8 * L + 12 * L * D + 8 * opened + 4 * opened * D + 16
