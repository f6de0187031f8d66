# ruff: noqa: I001
"""Does a clock keeper (a short kernel every PERIOD_MS on a thread, below) spare a paced
warm update the idle clocks? (issue 14). One account of 54 instruments (216 lanes, T 256,
K 2, wgpu, no run-on): after a pause of PAUSE_S, a warm update with no keeper (period 0)
or with a pulse of ITERATIONS every PERIOD_MS during the pause, the periods alternated
over REPEATS. The SM clock (nvidia-smi, where there is one) is read just before each
update. One JSON line per period. Not adopted: on the H200 even a pulse of 7.8 ms every
10 ms held the SM clock at 555 MHz, not 1,980 (docs/benchmarks.md).

    python docs/bench-results/keep_warm.py PAUSE_S PERIOD_MS[,PERIOD_MS...] ITERATIONS REPEATS
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from typing import Any

from regime_model.update import ModelSpec, refresh
import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.wgpu_backend import WgpuBackend


_PULSE = """
@group(0) @binding(0) var<storage, read_write> sink: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    var x = f32(id.x & 255u) * 1e-3;
    for (var i = 0u; i < ITERATIONSu; i = i + 1u) { x = fma(x, 0.9999, 1e-4); }
    // never true (x stays in [0, 1]): the store keeps the loop from being optimised away
    if (x < -1.0) { sink[id.x % arrayLength(&sink)] = x; }
}
"""
PULSE_WORKGROUPS = 132  # one per SM of an H200: every SM sees work


class ClockKeeper:
    """Pulses `device` (a wgpu GPUDevice) every `period_s` until stopped."""

    def __init__(self, device: Any, period_s: float, iterations: int = 4096) -> None:
        if period_s <= 0 or iterations <= 0:
            raise ValueError(
                f"clock keeper: period {period_s} s and {iterations} iterations per pulse "
                "must both be positive"
            )
        import wgpu  # noqa: PLC0415 - only where a GPU runs

        self.period_s, self.iterations = period_s, iterations
        self._device = device
        code = _PULSE.replace("ITERATIONS", str(int(iterations)))
        module = device.create_shader_module(code=code)
        self._pipeline = device.create_compute_pipeline(
            layout="auto", compute={"module": module, "entry_point": "main"}
        )
        usage = wgpu.BufferUsage
        self._sink = device.create_buffer(size=256, usage=usage.STORAGE | usage.COPY_SRC)
        self._mark = device.create_buffer(size=4, usage=usage.MAP_READ | usage.COPY_DST)
        self._group = device.create_bind_group(
            layout=self._pipeline.get_bind_group_layout(0),
            entries=[{"binding": 0, "resource": {"buffer": self._sink, "offset": 0}}],
        )
        self._read = wgpu.MapMode.READ
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.pulses = 0
        self.pulse_s = 0.0  # wall time of all pulses, read-back included

    def pulse(self) -> None:
        """One pulse, waited for."""
        t0 = time.perf_counter()
        encoder = self._device.create_command_encoder()
        compute = encoder.begin_compute_pass()
        compute.set_pipeline(self._pipeline)
        compute.set_bind_group(0, self._group)
        compute.dispatch_workgroups(PULSE_WORKGROUPS)
        compute.end()
        encoder.copy_buffer_to_buffer(self._sink, 0, self._mark, 0, 4)
        self._device.queue.submit([encoder.finish()])
        self._mark.map_sync(self._read, 0, 4)
        self._mark.unmap()
        self.pulses += 1
        self.pulse_s += time.perf_counter() - t0

    def start(self) -> ClockKeeper:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="clock-keeper", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            thread.join()

    def __enter__(self) -> ClockKeeper:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                self.pulse()
            except Exception as error:  # a lost device: the update's own call reports it
                print(f"clock keeper stopped: {error}", file=sys.stderr)
                return


def sm_clock() -> int | None:
    """The SM clock in MHz now, or None without nvidia-smi."""
    if shutil.which("nvidia-smi") is None:
        return None
    out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, check=False).stdout  # fmt: skip
    return int(out.split()[0]) if out.strip() else None


class Account:
    """One account of 54 instruments (216 lanes, T 256, K 2) on wgpu, warm, with the
    returns for `updates` more warm updates; `update()` runs the next: (wall, device) ms."""

    def __init__(self, updates: int) -> None:
        self.backend, N, self.T = WgpuBackend(), 54, 256
        self.spec = ModelSpec(extend_max=0)
        self.returns = 0.01 * regime_returns(N, self.T + 2 + updates, np.random.default_rng(3))
        self.keys = np.arange(N, dtype=np.uint32)
        T, keys, spec, backend = self.T, self.keys, self.spec, self.backend
        _, self.carries, _ = refresh(self.returns[:, :T], [None] * N, keys, 0, 1, spec, backend)
        self.seq = 0
        self.update()  # untimed: pipelines and buffers exist before the first timed one

    def update(self) -> tuple[float, float]:
        self.seq += 1
        seq, T = self.seq, self.T
        t0 = time.perf_counter()
        _, self.carries, info = refresh(self.returns[:, seq : seq + T], self.carries, self.keys,
                                        seq, 1, self.spec, self.backend)  # fmt: skip
        wall = 1e3 * (time.perf_counter() - t0)
        return round(wall, 2), round(info.timings_ms["device_update"], 2)


def main() -> None:
    pause, iterations, repeats = float(sys.argv[1]), int(sys.argv[3]), int(sys.argv[4])
    periods = [float(x) for x in sys.argv[2].split(",")]
    account = Account(repeats * len(periods))
    backend = account.backend
    device = backend.device.handle
    keepers = {p: ClockKeeper(device, p / 1e3, iterations) for p in periods if p > 0}
    rows: dict[float, list[dict[str, object]]] = {p: [] for p in periods}
    for _ in range(repeats):
        for period in periods:
            keeper = keepers.get(period)
            if keeper is not None:
                keeper.start()
            time.sleep(pause)  # a bench's pause between bars, as a paced daemon waits
            clock = sm_clock()
            wall, device_ms = account.update()
            if keeper is not None:
                keeper.stop()
            rows[period].append({"wall_ms": round(wall, 2), "sm_mhz": clock,
                                 "device_ms": device_ms})  # fmt: skip
    for period in periods:
        keeper = keepers.get(period)
        walls = [r["wall_ms"] for r in rows[period]]
        device_ms = [r["device_ms"] for r in rows[period]]
        print(json.dumps({
            "adapter": backend.adapter, "pause_s": pause, "period_ms": period,
            "iterations": iterations, "wall_ms_median": float(np.median(walls)),
            "device_ms_median": float(np.median(device_ms)),
            "pulses": keeper.pulses if keeper else 0,
            "pulse_ms_mean": round(1e3 * keeper.pulse_s / keeper.pulses, 3)
            if keeper and keeper.pulses else None,
            "runs": rows[period],
        }))  # fmt: skip


if __name__ == "__main__":
    main()
