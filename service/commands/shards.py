"""`regime-trader shards --count N [--to M]`: which shard runs each configured account.

For planning (is N balanced enough? does every shard run an account?) and for resharding:
`--to M` lists the accounts whose shard changes from N to M shards, so their databases can
be moved to the host or volume of their new shard before it starts (docs/scaling.md).
Takes `--json` and `--out PATH` as every command does (service/commands/output.py).
Exit 0; 78 for an invalid configuration; 2 (argparse) for a count out of range.
Also `bench reshard`'s parser (service/bench/reshard.py), the simulation behind N's choice.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from service.commands.output import add_output_flags, config_or_explain, emit, logs_to_stderr
from service.exit_codes import EX_CONFIG
from service.sharding import ShardError, assign, check_count, fewest_moves, moves

if TYPE_CHECKING:
    from service.config_loader import LoadedConfig

    Kinds = argparse._SubParsersAction[argparse.ArgumentParser]


def register(commands: Kinds) -> None:
    parser = commands.add_parser(
        "shards", help="which shard of N runs each configured account; --to M: who moves",
        description="Each account's shard of N (jump consistent hash of its name), as "
        "`run --shard I/N` selects them; with --to M, the accounts whose shard changes.",
    )
    parser.add_argument("--count", type=shard_count, required=True, metavar="N",
                        help="the number of shards")
    parser.add_argument("--to", type=shard_count, metavar="M",
                        help="also list the accounts that move from N to M shards")
    parser.add_argument("--config", type=Path, help="service.toml (default: the embedded default)")
    add_output_flags(parser, "the shards")
    parser.set_defaults(handler=handler)


def shard_count(text: str) -> int:
    """argparse's type for a number of shards: a usage error (exit 2) names the range."""
    try:
        return check_count(int(text))
    except ShardError as error:
        raise argparse.ArgumentTypeError(f"{text}: {error}") from None
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: not a whole number") from None


def handler(args: argparse.Namespace) -> int:
    config = config_or_explain(args.config)
    if config is None:
        return EX_CONFIG
    emit(shards_document(config, args.count, args.to), args, text_lines)
    return 0


def shards_document(config: LoadedConfig, count: int, to: int | None) -> dict[str, Any]:
    """The shards of `count` (each with its accounts) and, with `to`, who moves."""
    accounts = config.settings.account_names
    listed = set(config.instruments.accounts)
    document: dict[str, Any] = {
        "settings": str(config.settings_path),
        "accounts": len(accounts),
        "count": count,
        "shards": _layout(accounts, count, listed),
    }
    if to is not None:
        moved = moves(accounts, count, to)
        document["to"] = {
            "count": to,
            "shards": _layout(accounts, to, listed),
            "moves": [{"account": m.account, "from": f"{m.source}/{count}",
                       "to": f"{m.target}/{to}"} for m in moved],
            "moved": len(moved),
            "fewest_possible": fewest_moves(len(accounts), count, to),
        }
    return document


def _layout(accounts: Sequence[str], count: int, listed: set[str]) -> list[dict[str, Any]]:
    """Each shard of `count`: its accounts, and how many have instruments."""
    return [{"shard": f"{index}/{count}", "accounts": names,
             "with_instruments": sum(name in listed for name in names)}
            for index, names in enumerate(assign(accounts, count))]


def text_lines(document: dict[str, Any]) -> list[str]:
    lines = [f"{document['accounts']} accounts of {document['settings']} in "
             f"{document['count']} shards (`run --shard I/{document['count']}`):"]
    lines += _shard_lines(document["shards"])
    to = document.get("to")
    if to is not None:
        lines.append(f"from {document['count']} to {to['count']} shards, {to['moved']} of "
                     f"{document['accounts']} accounts move (a balanced layout moves "
                     f"{to['fewest_possible']} at least); move each one's database with it:")
        lines += [f"  {m['account']}: {m['from']} -> {m['to']}" for m in to["moves"]]
    return lines


def _shard_lines(shards: list[dict[str, Any]]) -> list[str]:
    return [_shard_line(shard) for shard in shards]


def _shard_line(shard: dict[str, Any]) -> str:
    names, ready = shard["accounts"], shard["with_instruments"]
    if not ready:  # cli.empty_shard: `run` and `check-config` refuse it
        what = f"none with instruments ({' '.join(names)})" if names else "no account"
        return (f"  {shard['shard']}: {what}: `run --shard {shard['shard']}` refuses to "
                "start (exit 78); run fewer shards")
    idle = f", {len(names) - ready} without instruments" if len(names) > ready else ""
    plural = "" if len(names) == 1 else "s"
    return f"  {shard['shard']}: {len(names)} account{plural}{idle}: {' '.join(names)}"


def add_reshard_bench(kinds: Kinds) -> None:
    """`regime-trader bench reshard`: registered by service/commands/bench.py."""
    bench = kinds.add_parser(
        "reshard", help="accounts moved from N to N+1 shards: jump hash, hash mod N, fewest",
    )
    bench.add_argument("--accounts", type=int, default=1000, help="generated account names")
    bench.add_argument("--from", dest="span", default="1..10", metavar="N or A..B",
                       help="the shard counts N resharded to N+1 (default 1..10)")
    add_output_flags(bench, "the table")
    bench.set_defaults(handler=reshard_handler)


def reshard_handler(args: argparse.Namespace) -> int:
    from service.bench import reshard  # noqa: PLC0415 - tools load on demand

    try:
        first, last = reshard.parse_span(args.span)
        reshard.check_accounts(args.accounts)
    except ValueError as error:
        print(f"regime-trader bench reshard: {error}", file=sys.stderr)
        return 2  # a usage error, as argparse's own
    logs_to_stderr()
    emit(reshard.simulate(args.accounts, first, last), args, reshard.table_lines)
    return 0
