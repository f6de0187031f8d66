"""Accounts are the unit of scale: which shard of N runs an account.

`run --shard I/N` (or `shard = "I/N"` in service.toml) runs the accounts whose shard of N
is I. An account's shard is the jump consistent hash (Lamping & Veach, 2014, "A Fast,
Minimal Memory, Consistent Hash Algorithm") of a stable 64-bit key of its name: the first
8 bytes, big-endian, of the SHA-256 of its UTF-8 name. The same on every host and Python
(never `hash()`, which is salted per process). From N to N+1 shards it moves only the
accounts that the new shard takes, about 1/(N+1) of them, and moves each INTO the new
shard; hash-mod-N would move about N/(N+1) of them (docs/scaling.md).

Pure functions: nothing here reads a file or the environment.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

# More shards than accounts (1,000 at most) leave shards empty; the bound keeps the
# numbers small in every message and manifest.
MAX_SHARDS = 1000
_SHARD_RE = re.compile(r"([0-9]{1,9})/([0-9]{1,9})")  # fullmatch: "1/3", never "1/3\n"
# The paper's 64-bit linear congruential step.
_LCG_MULTIPLIER = 2862933555777941757
_MASK_64 = (1 << 64) - 1


class ShardError(ValueError):
    """A shard that cannot be: the message says what was wrong, without the value."""


@dataclass(frozen=True)
class Shard:
    index: int  # 0 .. count - 1
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


class Move(NamedTuple):
    account: str
    source: int  # the shard of the old count
    target: int  # the shard of the new count


def parse_shard(text: str) -> Shard:
    """'I/N' -> Shard(I, N); ShardError says what is wrong ("the index must be 0..2")."""
    match = _SHARD_RE.fullmatch(text.strip())
    if match is None:
        raise ShardError("must be I/N, shard I of N counted from 0 (e.g. 0/3, 1/3, 2/3)")
    index, count = int(match.group(1)), int(match.group(2))
    check_count(count)
    if index >= count:
        raise ShardError(f"the index must be {_indices(count)}")
    return Shard(index, count)


def normalise_shard(text: str) -> str:
    """The settings' `shard`: 'I/N' written as parse_shard reads it ('01/3' -> '1/3');
    a ValueError that also names the value."""
    try:
        return str(parse_shard(text))
    except ShardError as error:
        raise ValueError(f"{text!r}: {error}") from None


def check_count(count: int) -> int:
    """A number of shards, 1..MAX_SHARDS; ShardError otherwise."""
    if not 1 <= count <= MAX_SHARDS:
        raise ShardError(f"the number of shards must be 1..{MAX_SHARDS}")
    return count


def _indices(count: int) -> str:
    return "0" if count == 1 else f"0..{count - 1}"


@lru_cache(maxsize=8192)
def account_key(account: str) -> int:
    """The stable 64-bit key of an account's name."""
    return int.from_bytes(hashlib.sha256(account.encode("utf-8")).digest()[:8], "big")


def jump_hash(key: int, buckets: int) -> int:
    """Lamping & Veach's jump consistent hash: the bucket 0..buckets-1 of a 64-bit key.

    The key drives a linear congruential generator; each step draws where the key's
    bucket next jumps to (always forward) as buckets are added, and the last jump before
    `buckets` is the answer. Growing from n to n+1 buckets moves a key only into bucket n,
    with probability 1/(n+1)."""
    bucket, jump = -1, 0
    while jump < buckets:
        bucket = jump
        key = (key * _LCG_MULTIPLIER + 1) & _MASK_64
        jump = int((bucket + 1) * ((1 << 31) / ((key >> 33) + 1)))
    return bucket


def shard_of(account: str, count: int) -> int:
    """The index of the shard of `count` that runs `account`."""
    return jump_hash(account_key(account), count)


def in_shard(accounts: Iterable[str], shard: Shard | None) -> tuple[str, ...]:
    """The accounts `shard` runs, in their order (all of them when there is no shard)."""
    if shard is None:
        return tuple(accounts)
    return tuple(a for a in accounts if shard_of(a, shard.count) == shard.index)


def assign(accounts: Iterable[str], count: int) -> list[list[str]]:
    """Each shard's accounts, shard 0 first, each in the accounts' order."""
    shards: list[list[str]] = [[] for _ in range(count)]
    for account in accounts:
        shards[shard_of(account, count)].append(account)
    return shards


def moves(accounts: Iterable[str], old: int, new: int) -> list[Move]:
    """The accounts whose shard changes from `old` to `new` shards, and where they go."""
    pairs = ((a, shard_of(a, old), shard_of(a, new)) for a in accounts)
    return [Move(a, source, target) for a, source, target in pairs if source != target]


def fewest_moves(accounts: int, old: int, new: int) -> int:
    """The fewest accounts any layout must move from `old` to `new` equal shards: those
    the added shards must take (or the removed shards held), ceil(A * |new - old| / max)."""
    return math.ceil(accounts * abs(new - old) / max(old, new))
