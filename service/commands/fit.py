"""`regime-trader fit`: fit the regime model to one price series from a CSV and report.

Parameter summaries (mean, sd, 5/50/95 %, R-hat, bulk and tail ESS for mu[k], sigma[k],
P[i,j] in the units of the input log returns), the filtered and the smoothed probability
of each regime at every bar, and the sampler's diagnostics. `--json` prints all of it as
one JSON document, `--out PATH` writes it to a file; `--csv-out` writes the per-bar
probabilities; the text report shows the last bars only. `--from`/`--to` fit one window
of the file (dates in its first column).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

from service.commands.output import add_output_flags, emit, logs_to_stderr, progress_at_tty
from service.exit_codes import EX_CANTCREAT, EX_DATAERR
from service.market.csv_prices import read_prices

# Defaults that reach R-hat <= 1.01 and bulk ESS >= 400 on every parameter (docs/fit.md);
# the warm-up's default is the sampler's (regime_model.fit: 40 split, 400 adapted).
CHAINS, DRAWS = 4, 500
LAST_BARS = 10


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("fit", help="fit the regime model to one price series (CSV)")
    parser.add_argument("--csv", type=Path, required=True, metavar="FILE")
    parser.add_argument("--column", default="close",
                        help="price column, any case (default: close; Yahoo's files say Close)")
    parser.add_argument("--from", dest="start", type=_date, metavar="DATE",
                        help="first bar to use (YYYY-MM-DD, inclusive)")
    parser.add_argument("--to", dest="end", type=_date, metavar="DATE",
                        help="last bar to use (YYYY-MM-DD, inclusive)")
    parser.add_argument("--states", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--chains", type=int, default=CHAINS)
    parser.add_argument("--draws", type=int, default=DRAWS, help="kept draws per chain")
    parser.add_argument("--warmup", type=int, default=None,
                        help="warm-up iterations (default: 40 for the split sampler, 400 for "
                        "the adapted one; the report says which ran)")
    add_output_flags(parser, "the report")
    parser.add_argument("--csv-out", type=Path, metavar="PATH",
                        help="write time, filtered and smoothed probabilities per bar")
    parser.add_argument("--html", type=Path, metavar="PATH",
                        help="write one self-contained HTML page: the series with its smoothed "
                        "regime probabilities, the posteriors and the diagnostics")
    parser.set_defaults(handler=handler)


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def handler(args: argparse.Namespace) -> int:
    import numpy as np  # noqa: PLC0415 - numpy and the model load for this command only

    from gpu_backend.numpy_backend import tune_allocator  # noqa: PLC0415
    from regime_model.fit import chain_ebfmi, fit_series  # noqa: PLC0415
    from regime_model.sampler import SamplerConfig  # noqa: PLC0415
    from regime_model.types import Priors  # noqa: PLC0415

    try:
        times, prices = read_prices(args.csv, args.column, args.start, args.end)
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EX_DATAERR
    if len(prices) < 33:
        print(
            f"error: {args.csv} has {len(prices)} usable prices; need at least 33", file=sys.stderr
        )
        return EX_DATAERR
    returns = np.diff(np.log(np.asarray(prices)))
    logs_to_stderr()
    tune_allocator()  # the scan's large temporaries: see gpu_backend.numpy_backend
    t0 = time.perf_counter()
    config = SamplerConfig(draws=args.draws, chains=args.chains)
    progress = progress_at_tty("fit")
    fit = fit_series(returns, args.states, args.seed, Priors(), config, args.warmup, progress)
    report = _report(fit, times[1:], chain_ebfmi(fit.sampler), time.perf_counter() - t0)
    if args.csv_out:
        write_paths(args.csv_out, report)
    emit(report, args, _lines)
    if args.html and not _write_html(args, fit, times, prices):
        return EX_CANTCREAT
    return 0


def _report(fit: Any, times: list[str], ebfmi: Any, seconds: float) -> dict[str, Any]:
    import numpy as np  # noqa: PLC0415

    flat = fit.draws.reshape(-1, fit.draws.shape[-1])
    q = np.quantile(flat, [0.05, 0.5, 0.95], axis=0)
    params = {
        name: {
            "mean": float(flat[:, i].mean()),
            "sd": float(flat[:, i].std(ddof=1)),
            "q5": float(q[0, i]),
            "q50": float(q[1, i]),
            "q95": float(q[2, i]),
            "rhat": float(fit.rhat[i]),
            "ess_bulk": float(fit.ess_bulk[i]),
            "ess_tail": float(fit.ess_tail[i]),
        }
        for i, name in enumerate(fit.names)
    }
    r = fit.sampler
    diagnostics = {
        "sampler": fit.tried[-1],
        "samplers_tried": list(fit.tried),
        "laplace_importance_ess": round(fit.laplace_ess, 4),
        "mode_search": {"calls": fit.modes.calls,
                        "converged": [bool(c) for c in fit.modes.converged]},
        "warmup": fit.warmup,
        "divergences": int(r.divergences.sum()),
        "ebfmi": [float(x) for x in ebfmi],
        "step_size": [float(x) for x in r.step_size],
        "trajectory_length": [float(x) for x in r.trajectory_length],
        "acceptance": [float(x) for x in r.acceptance],
        "gradient_evals": r.gradient_evals,
        "seconds": round(seconds, 3),
    }
    filtered, smoothed = (
        [{"time": t, "probs": [round(float(p), 6) for p in row]}
         for t, row in zip(times, path, strict=True)]
        for path in (fit.filtered, fit.smoothed)
    )  # fmt: skip
    return {"parameters": params, "diagnostics": diagnostics, "filtered": filtered,
            "smoothed": smoothed}  # fmt: skip


def write_paths(path: Path, report: dict[str, Any]) -> None:
    K = len(report["filtered"][0]["probs"]) if report["filtered"] else 0
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["time", *(f"filtered_{k + 1}" for k in range(K)),
                      *(f"smoothed_{k + 1}" for k in range(K))])  # fmt: skip
        for a, b in zip(report["filtered"], report["smoothed"], strict=True):
            out.writerow([a["time"], *a["probs"], *b["probs"]])


def _lines(report: Any) -> list[str]:
    lines = [
        f"{'parameter':10s} {'mean':>11s} {'sd':>10s} {'5%':>11s} {'50%':>11s} {'95%':>11s} "
        f"{'rhat':>6s} {'ess_bulk':>8s} {'ess_tail':>8s}"
    ]
    lines += [
        f"{name:10s} {s['mean']:11.6f} {s['sd']:10.6f} {s['q5']:11.6f} {s['q50']:11.6f} "
        f"{s['q95']:11.6f} {s['rhat']:6.3f} {s['ess_bulk']:8.0f} {s['ess_tail']:8.0f}"
        for name, s in report["parameters"].items()
    ]
    rows = list(zip(report["filtered"], report["smoothed"], strict=True))
    lines += ["", f"diagnostics: {json.dumps(report['diagnostics'])}", "",
              f"last {min(LAST_BARS, len(rows))} of {len(rows)} bars (time, filtered P(regime "
              "1..K), smoothed P(regime 1..K)); every bar: --csv-out PATH or --json"]
    return lines + [
        f"{a['time']} {' '.join(f'{p:.4f}' for p in a['probs'])}   "
        f"{' '.join(f'{p:.4f}' for p in b['probs'])}"
        for a, b in rows[-LAST_BARS:]
    ]


def _write_html(args: argparse.Namespace, fit: Any, times: list[str], prices: list[float]) -> bool:
    """The --html page (service.reports.fit_html); False, said on stderr, if unwritable."""
    from service.reports.fit_html import write_fit_html  # noqa: PLC0415
    from service.web.assets import page_assets  # noqa: PLC0415

    source = f"{args.csv.name} ({args.column})"
    try:
        write_fit_html(args.html, fit, times, prices, source, page_assets())
    except OSError as error:
        print(f"error: cannot write {args.html}: {error.strerror or error}", file=sys.stderr)
        return False
    print(f"wrote {args.html}", file=sys.stderr)
    return True
