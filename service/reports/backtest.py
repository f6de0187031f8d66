"""The summary a backtest prints when it ends: `regime-trader run` on a CSV replay.

A run counts as a finished backtest when its market is the CSV replay, it exited 0 and no
signal stopped it: every worker ended because its data ran out (or --stop-after, where
given, was reached first). Per account its summary (service.reports.summary) goes to
stderr as a table, and one `backtest.summary` event carries the same figures.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

import structlog

from service.config_loader import LoadedConfig
from service.exit_codes import EX_OK
from service.reports.account_history import NoHistoryError, account_series, read_account_history
from service.reports.summary import summarise, summary_json
from service.reports.summary_table import summary_text
from service.state.status_reads import READ_ERRORS
from service.worker.assembly import state_path

log = structlog.get_logger("service.reports")
# What stops one account's summary: nothing to summarise, or a database that cannot be read.
SUMMARY_ERRORS: tuple[type[Exception], ...] = (NoHistoryError, *READ_ERRORS)


def is_finished_backtest(config: LoadedConfig, exit_code: int, signalled: bool) -> bool:
    return config.settings.market.kind == "csv" and exit_code == EX_OK and not signalled


def summarise_backtest(
    config: LoadedConfig, state_dir: Path, exit_code: int, signalled: bool,
    out: TextIO | None = None,
) -> None:  # fmt: skip
    """After `run` returns: each account's summary, if the run was a finished backtest."""
    if not is_finished_backtest(config, exit_code, signalled):
        return
    for account in config.active_accounts:
        _summarise_account(account, state_path(state_dir, account), out or sys.stderr)


def _summarise_account(account: str, database: Path, out: TextIO) -> None:
    try:
        history = read_account_history(account, database)
    except SUMMARY_ERRORS as error:
        # The run itself succeeded; a summary that cannot be made is said, not raised.
        log.warning("backtest.no_summary", account=account, reason=str(error))
        return
    summary = summarise(account_series(history))
    print(f"\n{summary_text(summary)}", file=out)
    log.info("backtest.summary", **summary_json(summary))
