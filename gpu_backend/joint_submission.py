"""Several backends' warm runs in ONE submission of the device they share: what a process
serving every account of a host would submit at a bar.

Each backend keeps its own buffers, returns ring and pipelines; the runs are recorded
apart (`LaneSampler.prepare`), submitted together, and read back apart, so each result is
the bits of the same run alone (tests/gpu_backend/test_joint_submission.py). Whether the
GPU then runs them side by side, as it cannot for separate processes' contexts, is what
docs/bench-results/shared_device.py measures.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from gpu_backend.wgpu_backend import WgpuBackend
from gpu_backend.wgpu_inputs import constant_terms
from gpu_backend.wgpu_sampler import plan
from regime_model.backend import UpdateBatch
from regime_model.sampler import SampleResult


def run_in_one_submission(runs: Sequence[tuple[WgpuBackend, UpdateBatch]]) -> list[SampleResult]:
    """Each (backend, batch)'s `run_update`, in one submission. Every backend must share
    one device and run its batch with the one-dispatch lane sampler."""
    if not runs:
        return []
    device = runs[0][0].device
    samplers = [backend.lane_sampler_for(batch) for backend, batch in runs]
    for (backend, _), sampler in zip(runs, samplers, strict=True):
        if backend.device is not device or sampler is None:
            raise ValueError(
                "run_in_one_submission: every backend must share the first one's device and "
                f"run its batch in its lane sampler; {backend.adapter!r} cannot"
            )
    lanes = [s for s in samplers if s is not None]
    t0 = time.perf_counter()

    def joint() -> list[SampleResult]:
        prepared = [s.prepare(batch, plan(batch))
                    for s, (_, batch) in zip(lanes, runs, strict=True)]  # fmt: skip
        device.handle.queue.submit([p.commands for p in prepared])
        read = [s.finish(p) for s, p in zip(lanes, prepared, strict=True)]
        ms = 1e3 * (time.perf_counter() - t0)
        out = []
        for (_, batch), p, done in zip(runs, prepared, read, strict=True):
            const = constant_terms(batch.n_states, len(batch.y[0]), batch.priors)
            out.append(done.result(batch, p.plan, const, ms))
        return out

    return runs[0][0].kernels.guarded(joint)
