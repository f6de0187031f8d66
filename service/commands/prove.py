"""`regime-trader prove`: the proofs, each a long run that ends in a verdict.

`prove chaos` SIGKILLs workers at random fault points and checks the end state equals an
uninterrupted run (exit 1 if it differs); `prove soak` runs the embedded default on a fast
clock and samples RSS, descriptors and database size (docs/reliability.md). They are not
benchmarks: what they report is whether a property held, not how fast something ran.
`--json` prints the result as one JSON document, `--out PATH` writes it to a file
(service/commands/output.py); the soak rewrites its file after every sample.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from service.commands.output import add_output_flags, emit, logs_to_stderr


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("prove", help="prove crash equivalence (chaos) or flatness (soak)")
    proofs = parser.add_subparsers(required=True, metavar="PROOF")

    chaos = proofs.add_parser("chaos", help="SIGKILL workers at random fault points over 2 "
                              "accounts, then check crash equivalence; exit 1 if the end "
                              "state differs from an uninterrupted run")
    chaos.add_argument("--kills", type=int, required=True, metavar="N", help="kills in all")
    chaos.add_argument("--seed", type=int, default=0, help="the run's seed (reproducible)")
    chaos.add_argument("--effort", choices=("default", "light"), default="default",
                       help="the model's effort: the daemon's defaults, or the shorter "
                       "warm-up of the mechanics tests (the CI run's)")
    add_output_flags(chaos, "the result")
    chaos.set_defaults(handler=chaos_handler)

    soak = proofs.add_parser("soak", help="run the embedded default on a fast clock, sampling "
                             "RSS, descriptors, database size")
    soak.add_argument("--minutes", type=float, required=True, metavar="M", help="how long")
    soak.add_argument("--sample-s", type=float, default=60.0, help="sampling period, seconds")
    soak.add_argument("--json", action="store_true",
                      help="print the summary as one JSON document on stdout (nothing else)")
    soak.add_argument("--out", type=Path, metavar="PATH",
                      help="samples and summary, rewritten after every sample "
                      "(default soak-<date>-<time>.json)")
    soak.set_defaults(handler=soak_handler)


def chaos_handler(args: argparse.Namespace) -> int:
    # the tools load on demand
    from service.bench.chaos import chaos_settings, run_chaos  # noqa: PLC0415
    from service.bench.daemon_harness import LIGHT_EFFORT  # noqa: PLC0415

    logs_to_stderr()
    effort = LIGHT_EFFORT if args.effort == "light" else ""
    result = run_chaos(args.kills, args.seed, settings=chaos_settings(effort))
    emit(result, args)
    return 0 if result["equivalent"] else 1


def soak_handler(args: argparse.Namespace) -> int:
    from service.bench.soak import run_soak  # noqa: PLC0415

    logs_to_stderr()
    # The soak rewrites its file after every sample, so it always has one to write to.
    out = args.out or Path(f"soak-{time.strftime('%Y%m%d-%H%M%S')}.json")
    summary = run_soak(args.minutes, out, args.sample_s)
    # Printed only: the file is the soak's own, samples included, already written.
    emit(summary, argparse.Namespace(json=args.json, out=None))
    return 0
