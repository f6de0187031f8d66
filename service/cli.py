"""The `regime-trader` command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from service import lazy_log
from service.commands import register_all
from service.exit_codes import EX_CONFIG, EX_TEMPFAIL
from service.state.errors import StateError, UnusableStateError
from service.state_dir import resolve_state_dir
from service.version import VersionAction

if TYPE_CHECKING:  # pydantic's models: loaded by the commands that validate, when they run
    from service.config_loader import LoadedConfig

log = lazy_log.get_logger("service.cli")  # structlog loads on the first event


# The daemon's own commands, defined here: with one of them first on the command line the
# tools' modules (service/commands/) are not loaded, and `status` answers sooner.
OWN_COMMANDS = ("run", "check-config", "status")


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    args = _parser(tools=not words or words[0] not in OWN_COMMANDS).parse_args(words)
    return int(args.handler(args))


def _parser(tools: bool = True) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="regime-trader", description=__doc__)
    parser.add_argument("--version", action=VersionAction)  # package metadata, when asked
    commands = parser.add_subparsers(required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run the daemon in the foreground")
    _config_arg(run)
    run.add_argument("--state-dir", type=Path, help="where the per-account databases live")
    run.add_argument(
        "--stop-after",
        type=int,
        metavar="N",
        help="stop cleanly after N completed updates per account",
    )
    run.add_argument(
        "--http",
        metavar="ADDR",
        help="serve the dashboard, /metrics, /healthz and /api/status on HOST:PORT "
        "(overrides [http] listen; loopback unless [http] allow_remote = true)",
    )
    _shard_arg(run)
    run.set_defaults(handler=cmd_run)

    check = commands.add_parser("check-config", help="validate the configuration; exit 0 or 78")
    _config_arg(check)
    _shard_arg(check)
    check.add_argument("--keys", action="store_true",
                       help="also find every Alpaca account's keys where `run` looks for them "
                       "(environment, credentials, key_dir): what a start check needs")
    check.set_defaults(handler=cmd_check_config)

    status = commands.add_parser(
        "status", help="whether the daemon runs; per account its state, money and positions; "
        "exit 0 when all is healthy, 1 otherwise")
    _config_arg(status)
    status.add_argument("--state-dir", type=Path, help="where the per-account databases live")
    status.add_argument("--json", action="store_true", help="print one JSON object")
    status.add_argument("--live", action="store_true",
                        help="cash, equity, positions and open orders from the broker itself")
    status.set_defaults(handler=cmd_status)
    if tools:
        register_all(commands)
    return parser


def _config_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="service.toml (default: the embedded default)")


def _shard_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shard", metavar="I/N", help="only the accounts of shard I of N, "
                        "counted from 0 (overrides `shard`; docs/scaling.md)")


def cmd_run(args: argparse.Namespace) -> int:
    # Imported here: what `run` alone needs. The supervisor's process never loads numpy
    # or the worker's stack (service/worker/entry.py), only a finished backtest's summary.
    from service.secrets import SecretsError  # noqa: PLC0415
    from service.supervisor.state_lock import StateDirLockedError, hold_state_lock  # noqa: PLC0415
    from service.supervisor.supervisor import Supervisor  # noqa: PLC0415
    from service.worker.fault_points import FaultSpecError, faults_from_env  # noqa: PLC0415

    loaded = _load_or_report(args.config)
    _remember(loaded)  # so that the first `status` beside it need not validate again
    config = _shard_or_report(_http_or_report(loaded, args.http), args.shard)
    if config is None:
        return EX_CONFIG
    announce_shard(config)
    state_dir = resolve_state_dir(args.state_dir, config)
    try:
        faults = faults_from_env(dict(os.environ))
        check_keys(config)
    except (FaultSpecError, SecretsError) as error:
        log.error("config.rejected", errors=[str(error)])
        return EX_CONFIG
    try:
        with hold_state_lock(state_dir):  # one daemon per state directory
            supervisor = Supervisor(config, state_dir, args.stop_after, faults)
            code = supervisor.run()
        from service.reports.backtest import summarise_backtest  # noqa: PLC0415 - numpy

        summarise_backtest(config, state_dir, code, signalled=supervisor.stopping)
        return code
    except StateDirLockedError as error:  # the other daemon may stop: try again later
        log.error("service.state_dir_locked", reason=str(error), holder_pid=error.holder_pid,
                  lock=str(error.lock_path), exit_code=EX_TEMPFAIL)
        print(f"error: {error}", file=sys.stderr)
        return EX_TEMPFAIL
    except UnusableStateError as error:  # restarting will not help: a person must act
        log.error("service.stopped", reason=str(error), exit_code=EX_CONFIG)
        return EX_CONFIG
    except StateError as error:
        log.error("service.stopped", reason=str(error))
        return EX_TEMPFAIL


def cmd_check_config(args: argparse.Namespace) -> int:
    from service.secrets import SecretsError  # noqa: PLC0415

    loaded = _load_or_report(args.config)
    _remember(loaded)
    config = _shard_or_report(loaded, args.shard)
    if config is None:
        return EX_CONFIG
    try:
        if args.keys:
            check_keys(config)
    except SecretsError as error:
        _rejected(str(error))
        return EX_CONFIG
    log.info(
        "config.valid",
        config_hash=config.config_hash,
        accounts=list(config.shard_accounts),
        shard=config.settings.shard,
        settings=str(config.settings_path),
        instruments=str(config.instruments_path),
    )
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from service import config_cache  # noqa: PLC0415 - keeps other commands' start fast
    from service.status import run_status  # noqa: PLC0415

    # The same bytes validated before by this code: their summary, without pydantic.
    # --live needs the broker's settings, so it always loads (and the broker is slower).
    known = None if args.live else config_cache.recall(args.config)
    if known is not None:
        state_dir = resolve_state_dir(args.state_dir, known)
        return run_status(known, state_dir, args.json, sys.stdout)
    config = _load_or_report(args.config, logging=False)
    if config is None:
        return EX_CONFIG
    _remember(config)
    state_dir = resolve_state_dir(args.state_dir, config)
    return run_status(config, state_dir, args.json, sys.stdout, live=args.live)


def _load_or_report(path: Path | None, logging: bool = True) -> LoadedConfig | None:
    """Load the configuration, or log every problem (as `config.rejected`) and return None.
    Logging is set up from the configuration unless `logging` is False (a command that
    logs nothing when all is well); a bad configuration is always logged."""
    from service.config_loader import ConfigError, load_config  # noqa: PLC0415 - pydantic

    try:
        config = load_config(path)
    except ConfigError as error:
        _configure_logging()
        log.error("config.rejected", errors=[str(p) for p in error.problems])
        for problem in error.problems:
            print(f"error: {problem}", file=sys.stderr)
        return None
    if logging:
        _configure_logging(config.settings.logging.level, config.settings.logging.format)
    return config


def _remember(config: LoadedConfig | None) -> None:
    """Record a configuration as validated from its files (service/config_cache.py)."""
    if config is not None:
        from service import config_cache  # noqa: PLC0415

        config_cache.remember(config)


def _configure_logging(level: str = "info", fmt: str = "auto") -> None:
    from service.logs import configure_logging  # noqa: PLC0415 - structlog, on demand

    configure_logging(level, fmt)


def _http_or_report(config: LoadedConfig | None, listen: str | None) -> LoadedConfig | None:
    """The configuration with `run --http ADDR` applied, or None, the refusal logged."""
    try:
        return config if config is None else with_http(config, listen)
    except ValueError as error:  # not HOST:PORT, or not loopback without allow_remote
        log.error("config.rejected", errors=[f"--http {listen}: {error}"])
        print(f"error: --http: {error}", file=sys.stderr)
        return None


def _shard_or_report(config: LoadedConfig | None, shard: str | None) -> LoadedConfig | None:
    """The configuration with `--shard I/N` applied, or None, the refusal logged: a shard
    that cannot be, or one with no account to run (each shard runs one at least, as the
    instruments file must list one)."""
    if config is None:
        return None
    try:
        config = config.with_shard(shard)
    except ValueError as error:  # ShardError: not I/N, or I not below N
        _rejected(f"--shard {shard}: {error}")
        return None
    if config.shard is not None and not config.active_accounts:
        _rejected(empty_shard(config))
        return None
    return config


def empty_shard(config: LoadedConfig) -> str:
    """Why a shard with no account to run is refused, and what to do."""
    mine = config.shard_accounts
    held = f"its accounts ({', '.join(mine)}) have no instruments" if mine else (
        f"none of the {len(config.settings.accounts)} accounts falls in it")
    return (f"shard {config.settings.shard}: {held}; `regime-trader shards --count N` shows "
            "each shard's accounts: run fewer shards, or give its accounts instruments")


def _rejected(message: str) -> None:
    log.error("config.rejected", errors=[message])
    print(f"error: {message}", file=sys.stderr)


def announce_shard(config: LoadedConfig) -> None:
    """With a shard, which accounts it runs (the rest are other shards')."""
    if config.shard is None:
        return
    summary = config.summary()
    mine, active = summary.shard_accounts, summary.active_accounts
    log.info("shard.accounts", shard=config.settings.shard, accounts=list(active),
             without_instruments=[a for a in mine if a not in active],
             skipped=len(config.settings.accounts) - len(mine))


def with_http(config: LoadedConfig, listen: str | None) -> LoadedConfig:
    """`run --http ADDR` in place of [http] listen, under the same rules: ValueError names
    what is wrong (not HOST:PORT; not loopback while allow_remote is false)."""
    from service.settings_ops import parse_listen, refuse_remote  # noqa: PLC0415 - pydantic

    if listen is None:
        return config
    http = config.settings.http
    parse_listen(listen)
    if not http.allow_remote:
        refuse_remote(listen)
    served = http.model_copy(update={"listen": listen})
    # no longer the files' own settings: not to be remembered as theirs (config_cache)
    return replace(config, settings=config.settings.model_copy(update={"http": served}),
                   source_sha256=None)


def check_keys(config: LoadedConfig) -> None:
    """With Alpaca, every account's keys must be there before any worker starts (a worker
    that cannot find them would only be restarted in a loop): SecretsError, exit 78."""
    if not config.settings.uses_alpaca:
        return
    from service.secrets import load_keys  # noqa: PLC0415
    from service.worker.assembly import key_dir  # noqa: PLC0415 - the worker stack, run only

    for account in config.shard_accounts:  # another shard's keys may be elsewhere
        load_keys(account, key_dir(config))


if __name__ == "__main__":
    sys.exit(main())
