"""`regime-trader status`: per account, the last checkpoint, its targets and a health word.

The reads are service.state.status_reads' (read-only, safe beside a running daemon).
The schema records no write time, so the age is the time since the database (or its WAL)
was last written: a worker writes at every update, so this measures whether it is alive.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TextIO

from service.config_loader import LoadedConfig
from service.state.status_reads import (
    READ_ERRORS,
    SchemaVersionError,
    Snapshot,
    Warming,
    read_snapshot,
)
from service.worker.assembly import state_path

# "retired": left out of the instruments file (no worker); the operator's choice, not a fault
Health = Literal["ok", "stale", "no-state", "unreadable", "retired"]
DEFAULT_STALE_AFTER_S = 300.0
EXIT_NOT_ALL_OK = 1  # the report was printed, and an account is neither "ok" nor "retired"


@dataclass(frozen=True)
class AccountStatus:
    account: str
    database: Path
    health: Health
    age_s: float | None = None  # since the database was last written
    snapshot: Snapshot | None = None
    error: str | None = None


@dataclass(frozen=True)
class StatusReport:
    generated_at: datetime
    state_dir: Path
    config_hash: str  # of the configuration `status` loaded, to compare with checkpoints
    stale_after_s: float
    accounts: tuple[AccountStatus, ...]

    @property
    def all_ok(self) -> bool:
        return all(a.health in ("ok", "retired") for a in self.accounts)


# -- building the report -----------------------------------------------------------------


def build_report(
    config: LoadedConfig, state_dir: Path, now: datetime, stale_after_s: float
) -> StatusReport:
    active = set(config.active_accounts)
    accounts = tuple(
        _retired_unless(name in active,
                        account_status(name, state_path(state_dir, name), now, stale_after_s))
        for name in config.settings.account_names
    )
    return StatusReport(now, state_dir, config.config_hash, stale_after_s, accounts)


def _retired_unless(active: bool, status: AccountStatus) -> AccountStatus:
    """An account without instruments has no worker: its state ages by design, so it is
    "retired", not ok or stale; a fault (unreadable) or no state at all still shows."""
    if active or status.health not in ("ok", "stale"):
        return status
    return replace(status, health="retired")


def account_status(
    account: str, database: Path, now: datetime, stale_after_s: float
) -> AccountStatus:
    try:
        if not database.exists():  # raises, rather than answers False, when not permitted
            return AccountStatus(account, database, "no-state")
        age_s = _age_s(database, now)  # before opening: a reader must not look like a write
        snapshot = read_snapshot(database)
    except READ_ERRORS as error:
        return AccountStatus(account, database, "unreadable", error=_explain(database, error))
    if snapshot is None:
        return AccountStatus(account, database, "no-state", age_s)
    health: Health = "stale" if age_s > stale_after_s else "ok"
    return AccountStatus(account, database, health, age_s, snapshot)


def _age_s(database: Path, now: datetime) -> float:
    """Seconds since the last write to the database or its WAL (never negative).

    An empty WAL is ignored: a read-only open of a quiescent WAL database creates an empty
    -wal (and -shm) file, so counting it would make every `status` look like a fresh write.
    """
    stamps = [database.stat().st_mtime]
    wal = database.with_name(database.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        stamps.append(wal.stat().st_mtime)
    return max(0.0, now.timestamp() - max(stamps))


def _explain(database: Path, error: Exception) -> str:
    hint = "is it a regime-trader state database? Move it aside or restore it from a backup"
    if isinstance(error, PermissionError) or "unable to open" in str(error):
        hint = "run status as the service's user or root, or check the permissions"
    elif isinstance(error, SchemaVersionError):
        return f"{database}: {error}"  # the message already says what to do
    return f"{database}: {error}; {hint}"


# -- rendering ----------------------------------------------------------------------------


def render_json(report: StatusReport) -> str:
    data = asdict(report)
    data["all_ok"] = report.all_ok
    return json.dumps(data, indent=2, default=_json_value)


def _json_value(value: object) -> str:
    if isinstance(value, datetime | Path):
        return value.isoformat() if isinstance(value, datetime) else str(value)
    raise TypeError(f"cannot render {type(value).__name__} as JSON")


def render_text(report: StatusReport) -> str:
    header = (f"state {report.state_dir}  config {report.config_hash}  "
              f"stale after {report.stale_after_s:g}s")
    lines = [header, "", *_align([_SUMMARY_HEADER, *map(_summary_row, report.accounts)])]
    for account in report.accounts:
        lines += _details(account, report.config_hash)
    return "\n".join(lines) + "\n"


_SUMMARY_HEADER = ["ACCOUNT", "HEALTH", "SEQ", "BAR TIME", "AGE", "EQUITY", "CASH",
                   "OPEN INTENTS", "BACKEND", "CONFIG"]


def _summary_row(account: AccountStatus) -> list[str]:
    s = account.snapshot
    age = "-" if account.age_s is None else _duration(account.age_s)
    if s is None:
        return [account.account, account.health, "-", "-", age, "-", "-", "-", "-", "-"]
    return [account.account, account.health, str(s.seq), s.bar_time.isoformat(), age,
            f"{s.equity:,.2f}", f"{s.cash:,.2f}", str(s.open_intents),
            f"{s.backend}/{s.adapter}/{s.numerics}", s.config_hash]


def _details(account: AccountStatus, config_hash: str) -> list[str]:
    if account.error is not None:
        return ["", f"{account.account}: unreadable: {account.error}"]
    s = account.snapshot
    if s is None:
        return ["", f"{account.account}: no state yet at {account.database}"]
    note = "" if s.config_hash == config_hash else "  (checkpoint written under another config)"
    rows = [["SYMBOL", "TARGET QTY", "REGIME", "P(TURBULENT)"]]
    rows += [[t.symbol, f"{t.target_qty:g}", str(t.regime), f"{t.p_turbulent:.3f}"]
             for t in s.targets]
    title = f"{account.account}: targets at seq {s.seq}{note}"
    warming = [f"  {w.symbol}  warming up: {_warming_note(w)}" for w in s.warming]
    return ["", title, *("  " + line for line in _align(rows)), *warming]


def _warming_note(w: Warming) -> str:
    if w.stage == "model":
        return f"model warm-up running on {w.bars_available} bars, not traded yet"
    return f"{w.bars_available} of {w.bars_needed} bars"


def _align(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows]


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"


# -- the command --------------------------------------------------------------------------


def run_status(
    config: LoadedConfig,
    state_dir: Path,
    as_json: bool,
    out: TextIO,
    stale_after_s: float = DEFAULT_STALE_AFTER_S,
    now: datetime | None = None,
) -> int:
    """Print the report; 0 when every account is "ok" or "retired", else EXIT_NOT_ALL_OK."""
    report = build_report(config, state_dir, now or datetime.now(UTC), stale_after_s)
    out.write(render_json(report) + "\n" if as_json else render_text(report))
    out.flush()
    return 0 if report.all_ok else EXIT_NOT_ALL_OK


def positive_seconds(text: str) -> float:
    """argparse type for --stale-after: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value

