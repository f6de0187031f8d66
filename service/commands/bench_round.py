"""`regime-trader bench round`: the real daemon, a bar's release to the last account's
committed checkpoint (service/bench/round.py)."""

from __future__ import annotations

import argparse
import json
import sys

from service.commands.output import add_output_flags, emit, logs_to_stderr


def add_round_command(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    rnd = kinds.add_parser(
        "round", help="the real daemon: a bar's release to the last account's checkpoint",
        description="Runs `regime-trader run` (paced clock, synthetic market, simulated "
        "broker) and times each round, cold and warm, and each stage (service/bench/round.py).",
    )
    for flag, default, what in (
        ("--accounts", 5, "worker processes, one per account"),
        ("--instruments", 268, "in all, shared out as evenly as possible"),
        ("--chains", 4, "chains per instrument"), ("--window", 256, "returns per instrument"),
        ("--states", 2, "regimes K"), ("--bars", 8, "updates per account, the first cold"),
    ):
        rnd.add_argument(flag, type=int, default=default, help=what)
    rnd.add_argument("--backend", choices=("auto", "numpy", "wgpu"), default="auto")
    rnd.add_argument("--pace-s", type=float, default=10.0,
                     help="wall seconds per bar: longer than a warm round, or rounds overlap")
    rnd.add_argument("--lead-s", type=float, default=20.0,
                     help="launch to the first bar's release: longer than the workers' start-up")
    rnd.add_argument("--shift-moves", choices=("on", "off"), default="on",
                     help="[model] shift_moves (default on, the daemon's): measure its cost")
    rnd.add_argument("--shared-device", action="store_true",
                     help="[model] shared_device: one device process runs every account's warm "
                     "updates, joined (default off, the daemon's)")
    from service.settings import ModelSettings  # noqa: PLC0415 - pydantic loads on demand
    wide = ModelSettings.model_fields["extension_chains"].default  # the daemon's default
    rnd.add_argument("--extension-chains", type=int, default=wide, help=f"[model] "
                     f"extension_chains (default {wide}, the daemon's): a run-on block's chains, "
                     "with which an instrument that ran on starts its next update")
    margin = ModelSettings.model_fields["between_bars_margin"].default
    rnd.add_argument("--between-bars-margin", type=float, default=margin, metavar="M",
                     help=f"[model] "
                     f"between_bars_margin (default {margin}, the daemon's): the sampler "
                     "between bars runs on to this share of the gate's errors")
    between = ModelSettings.model_fields["sample_between_bars"].default  # neither: the daemon's
    mode = rnd.add_mutually_exclusive_group()
    mode.add_argument("--between-bars", dest="between_bars", action="store_const", const=True,
                      default=between, help="[model] sample_between_bars = true: each update's "
                      "sampler after its commit, the bar's estimate by reweighting its draws "
                      f"(the daemon's default, {json.dumps(between)})")
    mode.add_argument("--at-bar", dest="between_bars", action="store_const", const=False,
                      help="[model] sample_between_bars = false: the sampler at the bar")
    add_output_flags(rnd, "the figures")
    rnd.set_defaults(handler=round_handler)


def round_handler(args: argparse.Namespace) -> int:
    from service.bench import round as round_bench  # noqa: PLC0415 - tools load on demand

    shape = round_bench.RoundShape(
        args.accounts, args.instruments, args.chains, args.window, args.states, args.bars,
        args.backend, args.pace_s, args.lead_s, args.shift_moves == "on", args.shared_device,
        args.extension_chains, args.between_bars, args.between_bars_margin,
    )
    try:
        shape.check()
    except ValueError as error:
        print(f"regime-trader bench round: {error}", file=sys.stderr)
        return 2  # a usage error, as argparse's own
    logs_to_stderr()
    emit(round_bench.measure(shape), args, round_bench.summary_lines)
    return 0
