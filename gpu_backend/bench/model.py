"""The trial-shape update on numpy and wgpu, as JSON: `python -m gpu_backend.bench.model`.

Trial shape: 5 accounts x 268 instruments, 4 chains, T = 256, K = 2. Per backend, each
account's first update is cold (no carry) and the next ones warm-start from its carries,
as in the daemon. Figures: seconds per update (cold, warm median), per instrument,
effective samples per second (sum over instruments of the worst bulk ESS, divided by the
update's time), and for wgpu the kernel time from timestamp queries against host time.
numpy is slow at this shape, so it may run fewer accounts (`--numpy-accounts`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gpu_backend.identity import regime_returns
from regime_model.backend import Backend
from regime_model.update import InstrumentCarry, ModelSpec, refresh


def _update(
    backend: Backend, returns: np.ndarray, carries: list[InstrumentCarry | None], seq: int
) -> tuple[dict[str, Any], list[InstrumentCarry]]:
    spec = ModelSpec()
    keys = np.arange(len(returns), dtype=np.uint32)
    gpu = getattr(backend, "kernels", None)
    ns0 = gpu.gpu_ns if gpu is not None else 0
    sub0 = _submissions(backend)
    t0 = time.perf_counter()
    est, new, info = refresh(returns, carries, keys, seq, 20261130, spec, backend)
    wall = time.perf_counter() - t0
    ess = float(est.ess_bulk.sum())
    row = {
        "seconds": wall,
        "per_instrument_ms": 1e3 * wall / len(returns),
        "ess_per_second": ess / wall,
        "gradient_evals": info.gradient_evals,
        "converged": int(est.converged.sum()),
    }
    if gpu is not None:
        row["gpu_seconds"] = (gpu.gpu_ns - ns0) * 1e-9
        row["host_seconds"] = wall - row["gpu_seconds"]
        row["submissions"] = float(_submissions(backend) - sub0)
    return row, new


def _submissions(backend: Backend) -> int:
    """Queue submissions so far on a wgpu backend's device (counted at its queue)."""
    device = getattr(backend, "device", None)
    queue = getattr(getattr(device, "handle", None), "queue", None)
    return int(getattr(queue, "submissions", 0))


def run_account(
    backend: Backend, account: int, instruments: int, warm_updates: int
) -> list[dict[str, Any]]:
    rng = np.random.default_rng(account)
    series = 0.01 * regime_returns(instruments, 256 + warm_updates, rng)
    carries: list[InstrumentCarry | None] = [None] * instruments
    rows = []
    for seq in range(1 + warm_updates):
        row, new = _update(backend, series[:, seq : seq + 256], carries, seq + 1)
        rows.append({"account": account, "seq": seq + 1, "cold": seq == 0, **row})
        carries = list(new)
    return rows


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    cold = [r for r in rows if r["cold"]]
    warm = [r for r in rows if not r["cold"]]
    out: dict[str, Any] = {}
    for label, part in (("cold", cold), ("warm", warm)):
        if part:
            keys = [k for k in part[0] if isinstance(part[0][k], float)]
            out[label] = {k: float(np.median([r[k] for r in part])) for k in keys}
    return out


def bench(
    name: str, backend: Backend, accounts: int, instruments: int, warm_updates: int
) -> dict[str, Any]:
    rows = [r for a in range(accounts) for r in run_account(backend, a, instruments, warm_updates)]
    return {
        "backend": name,
        "adapter": backend.adapter,
        "numerics": backend.numerics,
        "accounts": accounts,
        "median_per_account_update": _summary(rows),
        "updates": rows,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    parser.add_argument("--accounts", type=int, default=5)
    parser.add_argument("--numpy-accounts", type=int, default=1)
    parser.add_argument("--instruments", type=int, default=268)
    parser.add_argument("--warm-updates", type=int, default=3)
    parser.add_argument(
        "--host-driver",
        action="store_true",
        help="also run wgpu with the host driver (one submission per trajectory) for warm "
        "batches, the path before the one-submission update",
    )
    args = parser.parse_args(argv)
    from gpu_backend.numpy_backend import NumpyBackend  # noqa: PLC0415
    from gpu_backend.wgpu_backend import WgpuBackend  # noqa: PLC0415

    t0 = time.perf_counter()
    gpu = WgpuBackend(profile=True)
    start_s = time.perf_counter() - t0
    result: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(),
        "host": platform.node(),
        "python": platform.python_version(),
        "shape": {"instruments": args.instruments, "chains": 4, "window": 256, "states": 2},
        "wgpu_startup_seconds": start_s,
        "wgpu": bench("wgpu", gpu, args.accounts, args.instruments, args.warm_updates),
        "numpy": bench(
            "numpy", NumpyBackend(), args.numpy_accounts, args.instruments, args.warm_updates
        ),
    }
    if args.host_driver:
        host = WgpuBackend(gpu.device, profile=True, device_update=False)
        result["wgpu_host_driver"] = bench(
            "wgpu", host, args.accounts, args.instruments, args.warm_updates
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for name in ("wgpu", "wgpu_host_driver", "numpy"):
        if name in result:
            print(name, json.dumps(result[name]["median_per_account_update"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
