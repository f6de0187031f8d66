"""How many threads one subgroup of the device runs, measured by a kernel that asks.

The scan kernels' rounds are shuffles where a lane's threads are exactly one subgroup
(shaders/scan_rounds.py). wgpu-py 0.32 reports the WebGPU defaults (4 to 128) as every
adapter's subgroup sizes, not the adapter's own, so the device is asked instead: one
workgroup of `threads` threads, each writing the `subgroup_size` it runs in. The lane
sampler checks the size again inside its own kernel (a driver may choose a pipeline's
subgroup size by the pipeline: shaders/lane_sampler.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

_PROBE = """
@group(0) @binding(0) var<storage, read_write> sizes: array<u32>;

@compute @workgroup_size({THREADS})
fn main(@builtin(local_invocation_index) j: u32, @builtin(subgroup_size) n: u32) {
    sizes[j] = n;
}
"""


def measure_subgroup_size(handle: Any, threads: int = 32) -> int:
    """The subgroup size every thread of a `threads`-thread workgroup reported; 0 where
    they disagree (no one size to build the shuffles for)."""
    import wgpu  # noqa: PLC0415 - heavy; only processes that use the GPU pay for it

    module = handle.create_shader_module(code=_PROBE.replace("{THREADS}", str(threads)))
    pipeline = handle.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": "main"}
    )
    usage = wgpu.BufferUsage
    sizes = handle.create_buffer(size=4 * threads, usage=usage.STORAGE | usage.COPY_SRC)
    group = handle.create_bind_group(
        layout=pipeline.get_bind_group_layout(0),
        entries=[{"binding": 0, "resource": {"buffer": sizes, "offset": 0, "size": sizes.size}}],
    )
    encoder = handle.create_command_encoder()
    compute = encoder.begin_compute_pass()
    compute.set_pipeline(pipeline)
    compute.set_bind_group(0, group)
    compute.dispatch_workgroups(1)
    compute.end()
    handle.queue.submit([encoder.finish()])
    seen = np.frombuffer(handle.queue.read_buffer(sizes), dtype=np.uint32)
    sizes.destroy()
    return int(seen[0]) if (seen == seen[0]).all() else 0
