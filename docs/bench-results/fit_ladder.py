"""`regime-trader fit` on S&P 500 closes: seeds of the whole series and windows of it.

    python docs/bench-results/fit_ladder.py --out fit-ladder.json [--before CHECKOUT]

Each row is one run of the real command (a fresh process: its wall time includes start-up,
reading the CSV and writing the report), with the sampler the ladder reported, the
samplers it tried, the Laplace approximation's importance ESS, the worst R-hat, the
smallest bulk and tail ESS, the acceptance, the batched gradient calls and the wall time.
With --before, the default fit also runs from another checkout (e.g. a `git worktree` of
the parent commit) in the same session, so the two compare as a ratio from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT / "tests" / "data" / "sp500.csv"
SEEDS = (20261130, 1, 2, 3, 4, 5, 6, 7, 8)
WINDOWS = (("2008-08-01", "2008-10-31"), ("2007-09-25", "2008-09-29"),
           ("2005-01-01", "2006-12-31"), ("2000-01-01", "2003-12-31"),
           ("1999-01-01", "2007-12-31"), ("2003-01-01", "2018-12-31"))  # fmt: skip


def run(extra: list[str], checkout: Path = ROOT) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    command = [sys.executable, "-m", "service.cli", "fit", "--csv", str(CSV), "--column",
               "Close", "--json", *extra]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True,
                          cwd=checkout)  # fmt: skip
    wall = time.perf_counter() - start
    report = json.loads(done.stdout)
    params, diag = report["parameters"], report["diagnostics"]
    return {
        "args": extra,
        "bars": len(report["filtered"]),
        "sampler": diag.get("sampler", "adapted"),
        "tried": diag.get("samplers_tried", ["adapted"]),
        "laplace_importance_ess": diag.get("laplace_importance_ess"),
        "worst_rhat": round(max(p["rhat"] for p in params.values()), 4),
        "min_ess_bulk": round(min(p["ess_bulk"] for p in params.values())),
        "min_ess_tail": round(min(p["ess_tail"] for p in params.values())),
        "acceptance": [round(a, 3) for a in diag["acceptance"]],
        "gradient_calls": diag["gradient_evals"],
        "fit_seconds": diag["seconds"],
        "wall_s": round(wall, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--before", type=Path, help="another checkout: its default fit too")
    args = parser.parse_args()
    rows: dict[str, Any] = {"seeds": [run(["--seed", str(s)]) for s in SEEDS],
            "windows": [run(["--from", a, "--to", b]) for a, b in WINDOWS]}  # fmt: skip
    if args.before:
        rows["before"] = [run([], args.before)]
    rows["machine"] = f"{platform.node()} ({platform.processor() or platform.machine()})"
    rows["date"] = datetime.now(UTC).date().isoformat()
    args.out.write_text(json.dumps(rows, indent=1) + "\n")
    for key in ("seeds", "windows", "before"):
        for row in rows.get(key, []):
            print(key, json.dumps(row))


if __name__ == "__main__":
    main()
