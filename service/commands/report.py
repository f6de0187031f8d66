"""`regime-trader report --account A`: one self-contained HTML report of an account.

The page holds the account's equity beside buy-and-hold, its drawdown, the summary table,
positions, recent orders, and per instrument the price with the probability of the
turbulent regime, its uncertainty band and the convergence state (docs/reports.md). It
is written to --out (default report-<account>-<date>.html here) and its path printed.
`--json` prints the summary as one JSON object instead (and writes the page only when
--out is given, its path then on stderr).

Exit codes: 0 written; 64 an account neither configured nor with a database; 66 no state
(or no history) yet; 65 a database that cannot be read; 73 the page cannot be written;
78 a bad configuration.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from service.commands.output import config_or_explain
from service.exit_codes import EX_CANTCREAT, EX_CONFIG, EX_DATAERR, EX_NOINPUT, EX_USAGE


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("report", help="one self-contained HTML report of an account")
    parser.add_argument("--account", required=True)
    parser.add_argument("--config", type=Path, help="service.toml (default: the embedded default)")
    parser.add_argument("--state-dir", type=Path, help="where the per-account databases live")
    parser.add_argument("--out", type=Path, metavar="PATH",
                        help="the HTML file (default: report-<account>-<date>.html here)")
    parser.add_argument("--json", action="store_true",
                        help="print the summary as one JSON object on stdout")
    parser.set_defaults(handler=handler)


def handler(args: argparse.Namespace) -> int:
    database = _database(args)
    if isinstance(database, int):
        return database
    data = _chart_data(args.account, database)
    if isinstance(data, int):
        return data
    if args.json:
        print(json.dumps(data["figures"], allow_nan=False))
        return _write(data, args.out, sys.stderr) if args.out else 0
    return _write(data, args.out, sys.stdout)


def _database(args: argparse.Namespace) -> Path | int:
    """The account's database path, or the exit code after saying what was wrong."""
    from service.state_dir import resolve_state_dir  # noqa: PLC0415
    from service.worker.assembly import state_path  # noqa: PLC0415

    config = config_or_explain(args.config)
    if config is None:
        return EX_CONFIG
    state_dir = resolve_state_dir(args.state_dir, config)
    database = state_path(state_dir, args.account)
    known = config.settings.account_names
    # An account taken out of the configuration keeps its history: its database, while
    # there, is still reported.
    if args.account not in known and not database.exists():
        print(f"error: unknown account {args.account!r}: it is not in the configuration "
              f"(accounts: {', '.join(known)}) and {state_dir} holds no database for it; "
              "pass one of those accounts, or the --config and --state-dir it ran with",
              file=sys.stderr)
        return EX_USAGE
    return database


def _chart_data(account: str, database: Path) -> dict[str, Any] | int:
    from service.reports.account_history import NoHistoryError  # noqa: PLC0415
    from service.state.status_reads import READ_ERRORS  # noqa: PLC0415
    from service.web.chart_data import account_chart_data  # noqa: PLC0415

    try:
        return account_chart_data(account, database)
    except NoHistoryError as error:
        print(f"error: {error}", file=sys.stderr)
        return EX_NOINPUT
    except READ_ERRORS as error:  # the file, SQLite, a malformed value: say which
        print(f"error: {database}: cannot read account {account!r}'s history ({error}); "
              "check the file, or restore it from a backup", file=sys.stderr)
        return EX_DATAERR


def _write(data: dict[str, Any], out: Path | None, say: TextIO) -> int:
    from service.reports.html_report import default_report_path, render_report  # noqa: PLC0415
    from service.web.assets import page_assets  # noqa: PLC0415

    path = out or default_report_path(str(data["account"]), datetime.now(UTC).date())
    try:
        path.write_text(render_report(data, page_assets()), encoding="utf-8")
    except OSError as error:
        print(f"error: cannot write the report to {path}: {error.strerror or error}; "
              "pass an --out in a folder you can write", file=sys.stderr)
        return EX_CANTCREAT
    print(path, file=say)
    return 0
