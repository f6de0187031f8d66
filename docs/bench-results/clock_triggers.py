# ruff: noqa: I001
"""What raises an idle GPU's clocks before a paced warm update? (issue 14). On the H200 the
SM clock reads 1,980 MHz for about 4 s after a process creates its device, with the GPU
otherwise idle, and 345 MHz between paced updates, where the same update runs 3x longer.
Each MODE is done LEAD_MS before a warm update that follows a pause of PAUSE_S (modes
alternated over REPEATS); the SM clock is read just before the update. One account of 54
instruments (216 lanes, T 256, K 2, wgpu, no run-on). One JSON line per mode.

Modes: none; buffer (create a 64 MB storage buffer, then destroy it); write (write 64 MB
into a buffer made once); pipeline (compile a small compute pipeline not seen before);
device (request a second device from the adapter, then drop it).

    python docs/bench-results/clock_triggers.py PAUSE_S LEAD_MS REPEATS MODE[,MODE...]
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

import regime_model  # noqa: F401 - before numpy (regime_model/__init__.py)
import numpy as np

from keep_warm import Account, sm_clock

MB64 = 64 << 20
_KERNEL = """
@group(0) @binding(0) var<storage, read_write> sink: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) { sink[id.x % 64u] = f32(id.x) * SALT; }
"""


def triggers(device: Any, adapter: Any) -> dict[str, Callable[[], None]]:
    import wgpu  # noqa: PLC0415 - only where a GPU runs

    usage = wgpu.BufferUsage
    held = device.create_buffer(size=MB64, usage=usage.STORAGE | usage.COPY_DST)
    payload = np.zeros(MB64 // 4, dtype=np.float32)
    salt = iter(range(1, 1 << 30))

    def buffer() -> None:
        device.create_buffer(size=MB64, usage=usage.STORAGE | usage.COPY_DST).destroy()

    def write() -> None:
        device.queue.write_buffer(held, 0, payload)
        device.queue.submit([])

    def pipeline() -> None:
        code = _KERNEL.replace("SALT", f"{next(salt)}.0")
        device.create_compute_pipeline(layout="auto", compute={
            "module": device.create_shader_module(code=code), "entry_point": "main"})  # fmt: skip

    def second_device() -> None:
        adapter.request_device_sync()

    return {"none": lambda: None, "buffer": buffer, "write": write, "pipeline": pipeline,
            "device": second_device}  # fmt: skip


def main() -> None:
    pause, lead, repeats = float(sys.argv[1]), float(sys.argv[2]) / 1e3, int(sys.argv[3])
    modes = sys.argv[4].split(",")
    account = Account(repeats * len(modes))
    backend = account.backend
    import wgpu  # noqa: PLC0415

    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    act = triggers(backend.device.handle, adapter)
    rows: dict[str, list[dict[str, object]]] = {m: [] for m in modes}
    for _ in range(repeats):
        for mode in modes:
            time.sleep(pause)
            t_act = time.perf_counter()
            act[mode]()
            act_ms = 1e3 * (time.perf_counter() - t_act)
            time.sleep(max(0.0, lead - act_ms / 1e3))
            clock = sm_clock()
            wall, device_ms = account.update()
            rows[mode].append({"act_ms": round(act_ms, 2), "sm_mhz": clock,
                               "wall_ms": round(wall, 2), "device_ms": device_ms})  # fmt: skip
    for mode in modes:
        print(json.dumps({
            "adapter": backend.adapter, "pause_s": pause, "lead_ms": 1e3 * lead, "mode": mode,
            "wall_ms_median": float(np.median([r["wall_ms"] for r in rows[mode]])),
            "device_ms_median": float(np.median([r["device_ms"] for r in rows[mode]])),
            "runs": rows[mode],
        }))  # fmt: skip


if __name__ == "__main__":
    main()
