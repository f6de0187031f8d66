"""`regime-trader replay --account A --seq N`: recompute a committed update from the
checkpoint before it and say whether its decisions come out the same (bit-identical on
numpy; within the identity tolerance on a GPU). Exit 0 identical, 1 different, 65 when
the update cannot be recomputed from the database (the message says why). `--json`: the
comparison as one JSON document; `--out PATH`: the same in a file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from service.commands.output import add_output_flags, emit, logs_to_stderr
from service.exit_codes import EX_DATAERR


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("replay", help="recompute a committed update and compare")
    parser.add_argument("--config", type=Path, help="service.toml (default: the embedded default)")
    parser.add_argument("--state-dir", type=Path, help="where the per-account databases live")
    parser.add_argument("--account", required=True)
    parser.add_argument("--seq", type=int, required=True, help="the update (>= 2)")
    parser.add_argument("--backend", choices=("numpy", "wgpu"), default="numpy")
    add_output_flags(parser, "the comparison")
    parser.set_defaults(handler=handler)


def handler(args: argparse.Namespace) -> int:
    from gpu_backend import select_backend  # noqa: PLC0415 - numpy and the model load here
    from service.config_loader import ConfigError, load_config  # noqa: PLC0415
    from service.state_dir import resolve_state_dir  # noqa: PLC0415
    from service.worker.assembly import state_path  # noqa: PLC0415
    from service.worker.replay import ReplayError, replay_update  # noqa: PLC0415

    logs_to_stderr()
    try:
        config = load_config(args.config)
    except ConfigError as error:
        for problem in error.problems:
            print(f"error: {problem}", file=sys.stderr)
        return 78
    database = state_path(resolve_state_dir(args.state_dir, config), args.account)
    if not database.exists():
        print(f"error: {database}: no database for account {args.account!r}", file=sys.stderr)
        return EX_DATAERR
    try:
        report = replay_update(database, config, args.seq, select_backend(args.backend))
    except ReplayError as error:
        print(f"error: {error}", file=sys.stderr)
        return EX_DATAERR
    emit(report, args, lambda r: _verdict(args, r))
    return 0 if report["identical"] else 1


def _verdict(args: argparse.Namespace, report: Any) -> list[str]:
    verdict = "identical" if report["identical"] else "DIFFERENT"
    return [f"update {args.seq} of {args.account}: {verdict} ({report['instruments']} "
            f"instruments, max |diff| {report['max_abs_diff']:.3g}, recorded on "
            f"{report['recorded']['backend']}, replayed on {report['replayed']['backend']})"]
