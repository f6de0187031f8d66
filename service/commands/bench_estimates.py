"""`bench validate`, `regime-change` and `digest`: how right the model's estimates are.

`validate` runs the validation suite (and with --mutants its power) and writes
docs/validation.md; `regime-change` replays a series through the worker's warm updates
against long cold references. Both load numpy and the model only when they run. Each
takes `--json` and `--out PATH` as every command does (service/commands/output.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from service.commands.output import add_output_flags, emit, logs_to_stderr, write_json

if TYPE_CHECKING:
    Kinds = argparse._SubParsersAction[argparse.ArgumentParser]


def add_estimate_commands(kinds: Kinds) -> None:
    _validate_parser(kinds)
    _regime_change_parser(kinds)
    digest = kinds.add_parser(
        "digest", help="SHA-256 of a fixed numpy update and fit: the same on every host",
    )
    add_output_flags(digest, "the digests")
    digest.set_defaults(handler=digest_handler)
    status = kinds.add_parser(
        "status", help="wall time of `regime-trader status` beside a running daemon")
    status.add_argument("--runs", type=int, default=10, help="calls of each form")
    add_output_flags(status, "the figures")
    status.set_defaults(handler=status_handler)


def status_handler(args: argparse.Namespace) -> int:
    from service.bench.status_latency import measure  # noqa: PLC0415 - tools load on demand

    logs_to_stderr()
    emit(measure(args.runs), args)
    return 0


def digest_handler(args: argparse.Namespace) -> int:
    from service.bench.digest import digests  # noqa: PLC0415 - tools load on demand

    logs_to_stderr()
    emit(digests(), args)
    return 0


def _validate_parser(kinds: Kinds) -> None:
    from service.bench.validate_names import CHECKS, MUTANTS  # noqa: PLC0415

    val = kinds.add_parser(
        "validate", help="the validation suite (SBC, posteriordb, S&P 500); --mutants: its power",
        description="Runs the validation suite and, with --mutants, again under each planted "
        "fault. One JSON document; --doc writes docs/validation.md from it.",
    )
    val.add_argument("--mutants", action="store_true", help="also run under every planted fault")
    val.add_argument("--quick", action="store_true", help="SBC with 40 datasets (default 200)")
    val.add_argument("--seed", type=int, default=7)
    val.add_argument("--jobs", type=int, default=2, help="mutant runs at a time")
    val.add_argument("--check", action="append", choices=CHECKS, help="only these checks")
    val.add_argument("--mutant", action="append", choices=MUTANTS, help="only these mutants")
    add_output_flags(val, "the report")
    val.add_argument("--doc", type=Path, metavar="PATH", help="write the markdown report here")
    val.add_argument("--make-reference", type=Path, metavar="PATH",
                     help="compute the S&P 500 reference (long runs) into PATH and stop")
    val.set_defaults(handler=validate_handler)


def validate_handler(args: argparse.Namespace) -> int:
    from service.bench import validate, validate_checks, validate_doc  # noqa: PLC0415
    from service.bench.validate_names import CHECKS  # noqa: PLC0415

    logs_to_stderr()
    if args.make_reference:
        write_json(args.make_reference, validate_checks.make_reference(args.seed))
        return 0
    report = validate.run(
        "quick" if args.quick else "full", args.seed, args.mutants, args.jobs,
        args.check or CHECKS, args.mutant or (),
    )
    if args.doc:
        args.doc.write_text(validate_doc.render(report))
    emit(report, args, validate_doc.summary_lines)
    failed = not report["passed"] or report.get("killed", 0) < report.get("planted", 0)
    return 1 if failed else 0


def _regime_change_parser(kinds: Kinds) -> None:
    rc = kinds.add_parser(
        "regime-change", help="warm estimates bar by bar against long cold references",
        description="Replays a CSV's closes through the worker's window and warm updates and, "
        "for every bar from --from to --to, runs a long cold reference on the same window.",
    )
    rc.add_argument("--csv", type=Path, metavar="FILE")
    rc.add_argument("--column", default="close", help="price column, any case")
    rc.add_argument("--from", dest="start", type=date.fromisoformat, metavar="DATE")
    rc.add_argument("--to", dest="end", type=date.fromisoformat, metavar="DATE")
    rc.add_argument("--window", type=int, default=256)
    rc.add_argument("--extend-max", type=int, choices=range(9), metavar="0-8",
                    help="the warm updates' [model] extend_max (default: the daemon's)")
    rc.add_argument("--model-set", action="append", default=[], metavar="FIELD=VALUE",
                    help="change one field of the warm updates' ModelSpec (chains, draws, "
                    "steps_max, warmup_warm, ...), repeatable: measure a sampler change")
    rc.add_argument("--between-bars", action="store_true",
                    help="the warm updates as [model] sample_between_bars runs them: each "
                    "update's sampler after it, the next bar's estimate by reweighting")
    rc.add_argument("--seed", type=int, default=7)
    rc.add_argument("--warm-seed", type=int, metavar="N",
                    help="the warm updates' own seed (default --seed): the same references "
                    "against another draw of the warm path's random streams")
    rc.add_argument("--jobs", type=int, default=2, help="reference runs at a time")
    rc.add_argument("--reference-chains", type=int, default=8)
    rc.add_argument("--reference-draws", type=int, default=4000)
    rc.add_argument("--reference-warmup", type=int, default=1000)
    rc.add_argument("--references", type=Path, metavar="JSON", action="append", default=[],
                    help="reuse the references of an earlier run's --out JSON (same series, "
                    "window, seed and reference settings): only the warm path is re-run; "
                    "repeatable, to join runs made one date range each")
    add_output_flags(rc, "the figures")
    rc.add_argument("--write-synthetic", type=Path, metavar="PATH",
                    help="write a synthetic series with known switch points (from --seed) "
                    "to PATH, print its switch dates, and stop")
    rc.set_defaults(handler=regime_change_handler)


def regime_change_handler(args: argparse.Namespace) -> int:
    from service.bench import regime_change  # noqa: PLC0415 - tools load on demand

    logs_to_stderr()
    if args.write_synthetic:
        switches = regime_change.synthetic_csv(args.write_synthetic, args.seed)
        emit({"switches": switches}, args)
        return 0
    if not (args.csv and args.start and args.end):
        print("regime-trader bench regime-change: --csv, --from and --to are required",
              file=sys.stderr)
        return 2
    if args.reference_chains < 8 or args.reference_draws < 4000:
        print("regime-trader bench regime-change: the reference needs >= 8 chains and "
              ">= 4000 draws", file=sys.stderr)
        return 2
    overrides = tuple(tuple(item.split("=", 1)) for item in args.model_set)
    if any(len(pair) != 2 for pair in overrides):
        print("regime-trader bench regime-change: --model-set takes FIELD=VALUE", file=sys.stderr)
        return 2
    series = regime_change.Series(args.csv, args.column, args.start, args.end, args.window,
                                  overrides=overrides,
                                  between_bars=args.between_bars)  # fmt: skip
    if args.extend_max is not None:  # else Series keeps ModelSpec's, the daemon's
        series = series._replace(extend_max=args.extend_max)
    reference = regime_change.Reference(
        args.reference_chains, args.reference_draws, args.reference_warmup
    )
    try:
        regime_change.warm_spec(series)  # a bad --model-set fails before any work
        known = regime_change.merged_references(args.references, series, args.seed,
                                                reference)
        figures = regime_change.measure(series, args.seed, args.jobs, reference, known,
                                        args.warm_seed)  # fmt: skip
    except (OSError, ValueError) as error:
        print(f"regime-trader bench regime-change: {error}", file=sys.stderr)
        return 65
    emit(figures, args, _headline)
    return 0


def _headline(figures: Any) -> list[str]:
    """The text summary: how far the warm estimates are from the references, and the time."""
    return [f"{key}: {json.dumps(figures[key])}"
            for key in ("abs_error", "unconverged_fraction", "seconds")]
