"""The kernel sweep: threads per lane, from one (shaders/hmm.py) to a workgroup (hmm_scan).

`regime-trader bench kernels --out F [--lanes 1072] [--window 256] [--states 2] ...` (or
`python -m gpu_backend.bench.kernels ...`).
For each lane-thread count it measures, on one device and in one run (so the figures
compare as ratios):
- `gradient_ms`: GPU time of one gradient evaluation of every lane, from timestamp
  queries around a fused trajectory of `--steps` leapfrog steps (one submission), less
  nothing: drift and kick are in it, as they are in the sampler;
- `warm_update_s` / `warm_gpu_s`: a whole warm update of the batch through `refresh` (the
  one-submission sampler and the summary), wall and GPU time, median of `--updates`.
0 threads per lane is the one-thread-per-lane kernel.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

# The model and the device are imported where they run: the command line builds this
# benchmark's parser at every start (`regime-trader bench kernels`).

THREADS = (0, 8, 16, 32, 64, 128, 256)


def gradient_ms(backend: Any, shape: Any, steps: int, repeats: int) -> float:
    """Median GPU ms per gradient evaluation over fused trajectories of `steps` steps."""
    from gpu_backend.selection import probe_inputs  # noqa: PLC0415
    from regime_model.types import Priors  # noqa: PLC0415

    theta, y = probe_inputs(shape)
    L, D = theta.shape
    momentum = np.random.default_rng(1).standard_normal((L, D))
    grad = np.zeros((L, D))
    eps, ones = np.full(L, 1e-3), np.ones((L, D))
    times = []
    for _ in range(repeats + 1):  # the first grows the pool
        ns0 = backend.kernels.gpu_ns
        backend.leapfrog(theta, momentum, grad, eps, ones, steps, y, shape.states, Priors())
        times.append((backend.kernels.gpu_ns - ns0) * 1e-6 / steps)
    return float(np.median(times[1:]))


def warm_updates(backend: Any, instruments: int, window: int, updates: int) -> dict[str, float]:
    """Median wall and GPU seconds of warm updates after one cold one."""
    from gpu_backend.identity import regime_returns  # noqa: PLC0415
    from regime_model.update import InstrumentCarry, ModelSpec, refresh  # noqa: PLC0415

    series = 0.01 * regime_returns(instruments, window + updates, np.random.default_rng(0))
    keys = np.arange(instruments, dtype=np.uint32)
    carries: list[InstrumentCarry | None] = [None] * instruments
    walls, gpus = [], []
    for seq in range(updates + 1):
        ns0, t0 = backend.kernels.gpu_ns, time.perf_counter()
        returns = series[:, seq : seq + window]
        _, new, _ = refresh(returns, carries, keys, seq + 1, 20261201, ModelSpec(), backend)
        if seq:
            walls.append(time.perf_counter() - t0)
            gpus.append((backend.kernels.gpu_ns - ns0) * 1e-9)
        carries = list(new)
    return {"warm_update_s": float(np.median(walls)), "warm_gpu_s": float(np.median(gpus))}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--lanes", type=int, default=268 * 4)
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--states", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--updates", type=int, default=3, help="warm updates; 0: none")
    parser.add_argument("--threads", default=",".join(map(str, THREADS)))
    parser.add_argument(
        "--accumulate", choices=("f64", "kahan"), default=None, help="default: the adapter's"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv), list(argv if argv is not None else sys.argv[1:]))


def run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from gpu_backend.selection import BatchShape  # noqa: PLC0415
    from gpu_backend.wgpu_backend import WgpuBackend  # noqa: PLC0415
    from gpu_backend.wgpu_device import open_device  # noqa: PLC0415

    device = open_device()
    shape = BatchShape(args.lanes, args.window, args.states)
    rows = []
    for threads in (int(t) for t in args.threads.split(",")):
        backend = WgpuBackend(
            device, profile=True, lane_threads=threads, accumulate=args.accumulate
        )
        row: dict[str, Any] = {"lane_threads": threads, "accumulate": backend.kernels.accumulate}
        row["gradient_ms"] = gradient_ms(backend, shape, args.steps, args.repeats)
        if args.updates:
            row.update(warm_updates(backend, args.lanes // 4, args.window, args.updates))
        print(json.dumps(row), flush=True)
        rows.append(row)
    result = {
        "date": dt.datetime.now(dt.UTC).isoformat(),
        "host": platform.node(),
        "adapter": device.info.adapter,
        "shape": {"lanes": args.lanes, "window": args.window, "states": args.states},
        "command": "python -m gpu_backend.bench.kernels " + " ".join(argv),
        "steps": args.steps,
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
