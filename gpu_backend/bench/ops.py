"""The op sweep: every kernel, batch sizes from 1 to 10,000 lanes, numpy against wgpu.

Written as one CSV per host and date (`ops-<host>-<YYYY-MM-DD>.csv`) so the crossover where
the GPU starts to win is a measured number on each machine. Run it as
`python -m gpu_backend.bench.ops [--out DIR]` or through `regime-trader bench --ops`.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import socket
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from gpu_backend.selection import BatchShape, probe_inputs
from regime_model.backend import Backend
from regime_model.types import Priors

LANES = (1, 3, 10, 30, 100, 300, 1000, 2000, 5000, 10_000)
FIELDS = (
    "host", "date", "adapter", "kernel", "states", "window", "lanes",
    "numpy_ms", "wgpu_ms", "speedup",
)  # fmt: skip


def _kernels(shape: BatchShape) -> dict[str, Callable[[Backend], Any]]:
    theta, y = probe_inputs(shape)
    K, priors = shape.states, Priors()
    return {
        "value_grad": lambda b: b.hmm_value_and_grad(theta, y, K, priors),
        "predictive": lambda b: b.hmm_predictive(theta, y, K),
    }


def median_ms(call: Callable[[], Any], repeats: int) -> float:
    call()  # warm-up: pool growth, first-touch pages
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def sweep(
    cpu: Backend, gpu: Backend, lanes: Sequence[int], window: int, states: int, repeats: int
) -> list[dict[str, Any]]:
    now = dt.datetime.now(dt.UTC)
    rows = []
    for n in lanes:
        for kernel, run in _kernels(BatchShape(n, window, states)).items():
            cpu_ms = median_ms(partial(run, cpu), repeats)
            gpu_ms = median_ms(partial(run, gpu), repeats)
            rows.append(
                {
                    "host": socket.gethostname(), "date": now.date().isoformat(),
                    "adapter": gpu.adapter, "kernel": kernel, "states": states,
                    "window": window, "lanes": n, "numpy_ms": round(cpu_ms, 4),
                    "wgpu_ms": round(gpu_ms, 4), "speedup": round(cpu_ms / gpu_ms, 3),
                }
            )  # fmt: skip
    return rows


def write_csv(rows: list[dict[str, Any]], out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    first = rows[0] if rows else {"host": socket.gethostname(), "date": "unknown"}
    path = out_dir / f"ops-{first['host']}-{first['date']}.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def run_op_sweep(
    out_dir: Path,
    lanes: Sequence[int] = LANES,
    window: int = 256,
    states: int = 2,
    repeats: int = 3,
) -> Path:
    """Sweep, write the CSV, print one line per row; returns the CSV's path."""
    from gpu_backend.numpy_backend import NumpyBackend  # noqa: PLC0415
    from gpu_backend.wgpu_backend import WgpuBackend  # noqa: PLC0415

    if not lanes or min(lanes) < 1:
        raise ValueError(f"lanes must be positive batch sizes, got {list(lanes)}")
    rows = sweep(NumpyBackend(), WgpuBackend(), lanes, window, states, repeats)
    for r in rows:
        print(
            f"{r['kernel']:>11} lanes={r['lanes']:>6} numpy {r['numpy_ms']:9.3f} ms  "
            f"wgpu {r['wgpu_ms']:9.3f} ms  x{r['speedup']:.2f}"
        )
    path = write_csv(rows, out_dir)
    print(f"wrote {path}")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("."), help="folder for the CSV")
    parser.add_argument("--lanes", type=int, nargs="+", default=list(LANES))
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--states", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    run_op_sweep(args.out, args.lanes, args.window, args.states, args.repeats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
