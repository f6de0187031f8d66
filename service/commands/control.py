"""`regime-trader pause|resume|flatten ACCOUNT`: the operator's control of one account.

Each writes the account's request into the state directory (service/control/requests.py),
where the running daemon's supervisor notices it within a second and tells the worker,
which acts on it at its next update; a worker that starts later reads it there, so a
request outlives restarts. The command says what will happen and whether a daemon is
running. Exit 0 when written; 64 for an account the configuration lacks; 78 for an
invalid configuration.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from service.commands.output import config_or_explain
from service.exit_codes import EX_CONFIG, EX_USAGE

MODES = {"pause": "paused", "resume": "running", "flatten": "flatten"}
WHAT = {
    "paused": "{a}: paused. The model keeps updating and checkpointing; no order is placed "
              "until `regime-trader resume {a}`.",
    "running": "{a}: resumed. It trades to the model's targets from its next update.",
    "flatten": "{a}: flatten. At its next update the worker sends a market order closing "
               "each position the broker shows; once the broker shows the account flat it "
               "stays paused until `regime-trader resume {a}`.",
}  # fmt: skip
HELP = {
    "pause": "stop placing orders for ACCOUNT (the model keeps updating)",
    "resume": "trade ACCOUNT normally again",
    "flatten": "close every position of ACCOUNT, then pause it",
}


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, help_text in HELP.items():
        parser = commands.add_parser(name, help=help_text)
        parser.add_argument("account", metavar="ACCOUNT")
        parser.add_argument("--config", type=Path,
                            help="service.toml (default: the embedded default)")
        parser.add_argument("--state-dir", type=Path, help="as `run` was given it")
        parser.set_defaults(handler=handler, mode=MODES[name])


def handler(args: argparse.Namespace) -> int:
    from service.control.requests import request, write_request  # noqa: PLC0415
    from service.state_dir import resolve_state_dir  # noqa: PLC0415

    config = config_or_explain(args.config)
    if config is None:
        return EX_CONFIG
    accounts = config.settings.account_names
    if args.account not in accounts:
        print(f"error: no account {args.account!r} in {config.settings_path}; its accounts: "
              f"{', '.join(accounts)}", file=sys.stderr)
        return EX_USAGE
    state_dir = resolve_state_dir(args.state_dir, config)
    path = write_request(state_dir, args.account, request(args.mode, by=_user()))
    print(WHAT[args.mode].format(a=args.account))
    print(_daemon_line(state_dir, args.account))
    print(f"Request written to {path}.")
    return 0


def _daemon_line(state_dir: Path, account: str) -> str:
    """Whether a daemon holds the state directory (its lock: certain, unlike a heartbeat's
    age), and what its status file last said of the account's worker."""
    from service.state.paths import lock_holder  # noqa: PLC0415
    from service.state.runtime_file import read_runtime  # noqa: PLC0415

    pid = lock_holder(state_dir) if state_dir.is_dir() else None
    if pid is None:
        return (f"No daemon is running on {state_dir}: the worker applies it when the "
                "daemon starts.")
    try:
        document = read_runtime(state_dir) or {}
    except ValueError:  # a torn or foreign file: the state is unknown, the rest holds
        document = {}
    state = document.get("accounts", {}).get(account, {}).get("state", "unknown")
    return (f"The daemon (pid {pid or 'starting'}) applies it within a second; the worker "
            f"(now {state}) at its next update, and logs control.applied.")


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name and no passwd entry (some containers)
        return "unknown"
