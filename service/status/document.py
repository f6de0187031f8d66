"""The status document: what `status --json` prints and the HTTP endpoint serves.

Top-level keys (docs/status.md lists every one):
- `generated_at`, `state_dir`, `config_hash` (of the configuration `status` loaded);
- `live`: whether the money came from the broker (--live) rather than the checkpoints;
- `healthy`: the daemon is `running` and every account's health is ok, retired or idle;
- `daemon`: service.status.daemon;
- `accounts`: one object per account of the settings, in their order
  (service.status.accounts); of a sharded daemon (`run --shard I/N`), its shard's only.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from service.config_summary import ConfigSummary
from service.state.runtime_file import RUNTIME_FILE, read_runtime
from service.status.accounts import (
    AccountRead,
    BrokerView,
    account_object,
    checkpoint_view,
    read_account,
)
from service.status.daemon import daemon_status

if TYPE_CHECKING:
    from service.config_loader import LoadedConfig

HEALTHY_ACCOUNTS = frozenset({"ok", "retired", "idle"})


def status_document(
    config: LoadedConfig | ConfigSummary,
    state_dir: Path,
    now: datetime,
    runtime: dict[str, Any] | None = None,
    live: bool = False,
) -> dict[str, Any]:
    """The status of the daemon on `state_dir` and of every account, at `now` (aware).

    `config` is the loaded configuration, or the summary of one validated before
    (service/config_cache.py); `live` needs the loaded one (the broker's settings).
    `runtime` is the supervisor's own RuntimeStatus.document() when it serves this; else
    the runtime file is read. Reads only: nothing in the state directory is written.
    """
    summary = config if isinstance(config, ConfigSummary) else config.summary()
    loaded = None if isinstance(config, ConfigSummary) else config
    if live and loaded is None:
        raise ValueError("status --live needs the loaded configuration, not a summary")
    loaded = loaded if live else None
    runtime, runtime_error = (runtime, None) if runtime is not None else _runtime(state_dir)
    daemon = daemon_status(state_dir, now, runtime)
    if runtime_error is not None:
        daemon.update(state="unknown", running=False, reason=runtime_error)
    workers: dict[str, Any] = (runtime or {}).get("accounts") or {}
    summary = _daemons_shard(summary, daemon.get("shard"))
    active = set(summary.active_accounts)
    accounts = [
        _account(loaded, state_dir, name, now, daemon["state"], workers.get(name),
                 name in active)
        for name in summary.shard_accounts
    ]
    return {
        "generated_at": now.isoformat(),
        "state_dir": str(state_dir),
        "config_hash": summary.config_hash,
        "live": live,
        "healthy": daemon["state"] == "running"
        and all(a["health"] in HEALTHY_ACCOUNTS for a in accounts),
        "daemon": daemon,
        "accounts": accounts,
    }


def _daemons_shard(config: ConfigSummary, shard: Any) -> ConfigSummary:
    """The shard the daemon runs (its runtime file's), unless the settings name one."""
    if config.shard is not None or not isinstance(shard, str):
        return config
    try:
        return config.with_shard(shard)
    except ValueError:  # a foreign or hand-edited runtime file: every account, as unsharded
        return config


def _account(
    live: LoadedConfig | None, state_dir: Path, name: str, now: datetime, daemon_state: str,
    worker: dict[str, Any] | None, active: bool,
) -> dict[str, Any]:
    """One account; with the broker's own view when `live` (the loaded configuration)."""
    read = read_account(state_dir, name)
    view = None if read.snapshot is None else checkpoint_view(read.snapshot)
    live_error = None
    if live is not None and active:
        view, live_error = _live_view(live, state_dir, name, read, view)
    return account_object(name, read, now, daemon_state, worker, active, view, live_error)


def _live_view(
    config: LoadedConfig, state_dir: Path, name: str, read: AccountRead,
    fallback: BrokerView | None,
) -> tuple[BrokerView | None, str | None]:
    """The broker's view, or the checkpoint's with the reason the broker's is missing."""
    from service.status.live import LiveUnavailableError, broker_view  # noqa: PLC0415 - --live only

    alpaca = config.settings.broker.kind == "alpaca"
    if read.snapshot is None and not alpaca:
        return fallback, "no update yet: the simulated broker is valued at the last update's bar"
    market_time = read.snapshot.bar_time if read.snapshot is not None else datetime.now(UTC)
    try:
        return broker_view(config, state_dir, name, market_time), None
    except LiveUnavailableError as error:
        return fallback, str(error)


def _runtime(state_dir: Path) -> tuple[dict[str, Any] | None, str | None]:
    try:
        return read_runtime(state_dir), None
    except (OSError, ValueError) as error:  # unreadable or malformed: say so, read the rest
        return None, f"{state_dir / RUNTIME_FILE}: {error}"
