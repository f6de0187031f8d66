"""`regime-trader bench reshard`: how many accounts move when N shards become N+1.

For each N of the span, the accounts are placed in N and in N+1 shards three ways, and
the moves counted: the jump consistent hash the daemon uses (service/sharding.py); the
same 64-bit key modulo the shard count (what a naive layout would do); and the fewest
any balanced layout must move, the accounts the new shard must take, ceil(A / (N+1)).
Balance is the largest and the smallest shard of N+1 under each hash. Account names are
generated (`acct-00000`, ...): the key is a SHA-256 of the name, so any names behave alike.
"""

from __future__ import annotations

import platform
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from service.sharding import MAX_SHARDS, account_key, fewest_moves, jump_hash

MAX_ACCOUNTS = 1_000_000  # a few seconds of hashing
_SPAN_RE = re.compile(r"([0-9]{1,6})(?:\.\.([0-9]{1,6}))?")
Placement = Callable[[int, int], int]  # (key, shards) -> shard


def parse_span(text: str) -> tuple[int, int]:
    """'N' or 'A..B' -> (first, last) shard counts, each resharded to one more."""
    match = _SPAN_RE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"--from {text}: write N or A..B, e.g. 3 or 1..10")
    first = int(match.group(1))
    last = int(match.group(2) or first)
    if not 1 <= first <= last < MAX_SHARDS:
        raise ValueError(f"--from {text}: the counts must rise from 1 to {MAX_SHARDS - 1} at most")
    return first, last


def check_accounts(accounts: int) -> int:
    if not 1 <= accounts <= MAX_ACCOUNTS:
        raise ValueError(f"--accounts {accounts}: 1..{MAX_ACCOUNTS}")
    return accounts


def account_names(count: int) -> list[str]:
    return [f"acct-{i:05d}" for i in range(count)]


def mod_hash(key: int, shards: int) -> int:
    return key % shards


def simulate(accounts: int, first: int = 1, last: int = 10) -> dict[str, Any]:
    """The table for N = first..last, each N resharded to N + 1."""
    keys = [account_key(name) for name in account_names(check_accounts(accounts))]
    return {
        "host": platform.node(),
        "date": time.strftime("%Y-%m-%d"),
        "accounts": accounts,
        "names": "acct-00000, acct-00001, ...",
        "rows": [_row(keys, n) for n in range(first, last + 1)],
    }


def _row(keys: Sequence[int], n: int) -> dict[str, Any]:
    jump_moves, jump_sizes, jump_elsewhere = _reshard(keys, n, jump_hash)
    mod_moves, mod_sizes, _ = _reshard(keys, n, mod_hash)
    return {
        "from": n,
        "to": n + 1,
        "jump_moves": jump_moves,
        "jump_moved_elsewhere": jump_elsewhere,  # not into the new shard: always 0
        "mod_moves": mod_moves,
        "fewest_moves": fewest_moves(len(keys), n, n + 1),
        "jump_largest": max(jump_sizes),
        "jump_smallest": min(jump_sizes),
        "mod_largest": max(mod_sizes),
        "mod_smallest": min(mod_sizes),
    }


def _reshard(keys: Sequence[int], n: int, place: Placement) -> tuple[int, list[int], int]:
    """Moves from n to n+1 shards, the n+1 shards' sizes, and the moves that went
    anywhere but the new shard."""
    sizes = [0] * (n + 1)
    moved = elsewhere = 0
    for key in keys:
        before, after = place(key, n), place(key, n + 1)
        sizes[after] += 1
        if before != after:
            moved += 1
            elsewhere += after != n
    return moved, sizes, elsewhere


def table_lines(document: dict[str, Any]) -> list[str]:
    """The Markdown table docs/scaling.md shows."""
    lines = [
        f"{document['accounts']} accounts, {document['host']}, {document['date']}",
        "",
        "| N -> N+1 | moved: jump hash | moved: hash mod N | fewest possible "
        "| jump: largest / smallest shard | mod: largest / smallest shard |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['from']} -> {r['to']} | {r['jump_moves']} | {r['mod_moves']} | "
        f"{r['fewest_moves']} | {r['jump_largest']} / {r['jump_smallest']} | "
        f"{r['mod_largest']} / {r['mod_smallest']} |"
        for r in document["rows"]
    ]
    return lines
