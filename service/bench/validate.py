"""`regime-trader bench validate`: run the validation suite; with `--mutants`, run it again
under each planted fault (service/bench/mutants.py) and report which checks catch it.

One JSON document holds every figure; docs/validation.md is written from it
(validate_doc.py). Runs are deterministic for a seed on one host: a re-run gives the same
figures. Mutants run in separate processes (`jobs` at a time), each fault confined to its
own process.
"""

from __future__ import annotations

import json
import multiprocessing
import platform
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from service.bench import validate_checks as checks
from service.bench import validate_data as data
from service.bench.mutants import BY_NAME, MUTANTS
from service.bench.validate_names import CHECKS


def _runners(size: str, seed: int) -> dict[str, Callable[[], checks.Check]]:
    reference = json.loads(data.require(data.SP500_REFERENCE).read_text())
    return {
        "gradient": lambda: checks.gradient(seed),
        "sbc_k2": lambda: checks.calibration(2, size, seed),
        "sbc_k3": lambda: checks.calibration(3, size, seed),
        "posteriordb": lambda: checks.posteriordb(seed),
        "sp500_posterior": lambda: checks.sp500_posterior(seed, reference),
        "worker_path": lambda: checks.worker_path(seed, reference),
    }


def run_suite(size: str, seed: int, only: Sequence[str] = CHECKS) -> list[dict[str, Any]]:
    runners = _runners(size, seed)
    return [runners[name]()._asdict() for name in CHECKS if name in only]


def _under_mutant(job: tuple[str, str, int, tuple[str, ...]]) -> list[dict[str, Any]]:
    """One suite run in a pool process: the control (name "") or under one planted fault."""
    name, size, seed, only = job
    if not name:
        return run_suite(size, seed, only)
    with BY_NAME[name].plant():
        return run_suite(size, seed, only)


def run(
    size: str,
    seed: int,
    mutants: bool,
    jobs: int = 2,
    only_checks: Sequence[str] = CHECKS,
    only_mutants: Sequence[str] = (),
) -> dict[str, Any]:
    """The suite at `size`; with `mutants`, the kill table, whose runs are the quick suite
    (the one CI runs at every commit, so its power is what the table shows)."""
    t0 = time.perf_counter()
    chosen = [m for m in MUTANTS if mutants and (not only_mutants or m.name in only_mutants)]
    work = [("", size, seed, tuple(only_checks))]
    work += [(m.name, "quick", seed, tuple(only_checks)) for m in chosen]
    if chosen:
        with multiprocessing.get_context("spawn").Pool(max(1, jobs)) as pool:
            suite, *outcomes = pool.map(_under_mutant, work, chunksize=1)
    else:
        suite, outcomes = _under_mutant(work[0]), []
    report: dict[str, Any] = {
        "command": " ".join(["regime-trader", *sys.argv[1:]]) if sys.argv else "",
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.node()} ({cpu_model()}, {platform.machine()})",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "size": size,
        "seed": seed,
        "checks": suite,
        "passed": all(c["passed"] for c in suite),
    }
    if mutants:
        report["mutants"] = [_kill_row(m.name, m.description, out)
                             for m, out in zip(chosen, outcomes, strict=True)]  # fmt: skip
        report["killed"] = sum(row["killed"] for row in report["mutants"])
        report["planted"] = len(chosen)
    report["seconds"] = round(time.perf_counter() - t0, 1)
    return report


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), else what platform knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _kill_row(name: str, description: str, outcome: list[dict[str, Any]]) -> dict[str, Any]:
    failed = [c["name"] for c in outcome if not c["passed"]]
    return {
        "name": name,
        "description": description,
        "killed": bool(failed),
        "failed": failed,
        "checks": {c["name"]: {"passed": c["passed"], "figures": c["figures"]} for c in outcome},
    }
