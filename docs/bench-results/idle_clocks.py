"""What an idle GPU costs a paced warm update (issue 14): one account of 54 instruments
(216 lanes, T 256, K 2, wgpu), warm updates back to back or after a pause, optionally
after LEAD_MS of a busy kernel meant to raise the clocks first. One JSON line.

    python docs/bench-results/idle_clocks.py PAUSE_S LEAD_MS[,LEAD_MS...]

Run on the H200 (2026-12-02, eleventh session) with `nvidia-smi --query-gpu=clocks.sm
--format=csv -lms 100` beside it: 345 MHz between updates, 1,980 MHz while busy.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.wgpu_backend import WgpuBackend
from regime_model.update import ModelSpec, refresh

BUSY = """
@group(0) @binding(0) var<storage, read_write> sink: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    var x = f32(id.x & 255u) * 1e-3;
    for (var i = 0u; i < 4096u; i = i + 1u) { x = fma(x, 0.9999, 1e-4); }
    if (x < -1.0) { sink[id.x % arrayLength(&sink)] = x; }
}
"""


def busy_for(device, seconds: float) -> int:  # type: ignore[no-untyped-def]
    """Submit the busy kernel back to back for `seconds` (a 4-byte read-back paces it)."""
    import wgpu  # noqa: PLC0415 - only where a GPU runs

    pipe = device.create_compute_pipeline(
        layout="auto", compute={"module": device.create_shader_module(code=BUSY),
                                "entry_point": "main"})  # fmt: skip
    usage = wgpu.BufferUsage
    sink = device.create_buffer(size=256, usage=usage.STORAGE | usage.COPY_SRC)
    mark = device.create_buffer(size=4, usage=usage.MAP_READ | usage.COPY_DST)
    group = device.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": sink, "offset": 0}}])  # fmt: skip
    n, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        enc = device.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(pipe)
        cp.set_bind_group(0, group)
        cp.dispatch_workgroups(1024)
        cp.end()
        enc.copy_buffer_to_buffer(sink, 0, mark, 0, 4)
        device.queue.submit([enc.finish()])
        mark.map_sync(wgpu.MapMode.READ, 0, 4)
        mark.unmap()
        n += 1
    return n


def main() -> None:
    pause, leads = float(sys.argv[1]), [float(x) for x in sys.argv[2].split(",")]
    backend, N, T = WgpuBackend(), 54, 256
    spec = ModelSpec(extend_max=0)
    returns = 0.01 * regime_returns(N, T + 40, np.random.default_rng(3))
    keys = np.arange(N, dtype=np.uint32)
    _, carries, _ = refresh(returns[:, :T], [None] * N, keys, 0, 1, spec, backend)
    rows: dict[str, list[list[float]]] = {}
    seq = 0
    for _ in range(3):
        for lead in leads:
            seq += 1
            time.sleep(pause)
            if lead:
                busy_for(backend.device.handle, lead / 1e3)
            t0 = time.perf_counter()
            _, carries, info = refresh(returns[:, seq : seq + T], carries, keys, seq, 1, spec,
                                       backend)  # fmt: skip
            wall = 1e3 * (time.perf_counter() - t0)
            rows.setdefault(str(lead), []).append([round(wall, 1),
                                                   round(info.timings_ms["device_update"], 1)])
    print(json.dumps({"pause_s": pause, "lead_ms: [wall_ms, device_update_ms] x 3": rows}))


if __name__ == "__main__":
    main()
