# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""What `auto` measures, old and new: `python docs/bench-results/auto_probe.py [LANES...]`
(default 4 8 16 32 64; T = 256, K = 2) prints, per lane count, one gradient call on wgpu
(behind its fallback, as `auto` builds it) and on numpy (what `auto` timed before the
nineteenth session) and the probe's warm update on both (what it times now), in ms, with
the backend each would pick."""

import sys

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads

from gpu_backend import BatchShape
from gpu_backend.fallback import FallbackBackend
from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.selection import time_value_and_grad, time_warm_update
from gpu_backend.wgpu_backend import WgpuBackend


def main() -> None:
    gpu, cpu = FallbackBackend(WgpuBackend, NumpyBackend()), NumpyBackend()
    print(f"adapter {gpu.adapter}")
    for lanes in [int(a) for a in sys.argv[1:]] or [4, 8, 16, 32, 64]:
        shape = BatchShape(lanes, 256, 2)
        grad = [1e3 * time_value_and_grad(b, shape) for b in (gpu, cpu)]
        warm = [1e3 * time_warm_update(b, shape) for b in (gpu, cpu)]
        picks = ["wgpu" if g < c else "numpy" for g, c in (grad, warm)]
        print(f"{lanes:4d} lanes: gradient wgpu {grad[0]:.2f} numpy {grad[1]:.2f} -> {picks[0]}; "
              f"warm update wgpu {warm[0]:.1f} numpy {warm[1]:.1f} -> {picks[1]} "
              f"(numpy / wgpu {warm[1] / warm[0]:.1f}x)")


if __name__ == "__main__":
    main()
