"""Decide what a changed instruments file means: rejected, unchanged, or a new set.

The whole file is read, parsed and validated before anything changes; a file that fails
leaves the last good configuration in force. The caller (the supervisor) applies an
accepted change; workers take it at their next update boundary.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal

from service.config_loader import ConfigError, LoadedConfig, load_instruments, read_bounded
from service.types import Symbol

Status = Literal["applied", "rejected", "unchanged"]


@dataclass(frozen=True)
class ReloadOutcome:
    status: Status
    config: LoadedConfig
    added: dict[str, list[Symbol]] = field(default_factory=dict)
    removed: dict[str, list[Symbol]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def diff_instruments(
    old: LoadedConfig, new: LoadedConfig
) -> tuple[dict[str, list[Symbol]], dict[str, list[Symbol]]]:
    """Per account, the symbols added and removed (accounts with no change left out)."""
    added, removed = {}, {}
    for account in sorted(set(old.active_accounts) | set(new.active_accounts)):
        before, after = set(symbols_of(old, account)), set(symbols_of(new, account))
        if after - before:
            added[account] = sorted(after - before)
        if before - after:
            removed[account] = sorted(before - after)
    return added, removed


def symbols_of(config: LoadedConfig, account: str) -> tuple[Symbol, ...]:
    entry = config.instruments.accounts.get(account)
    return entry.symbols if entry else ()


class InstrumentsReloader:
    """Holds the configuration in force and judges each new version of the file."""

    def __init__(self, config: LoadedConfig) -> None:
        self.config = config
        self._raw_hash = raw_hash(config)
        self._last_sample: str | None = self._raw_hash

    def check(self) -> ReloadOutcome:
        try:
            instruments = load_instruments(self.config.instruments_path, self.config.settings)
        except ConfigError as error:
            return ReloadOutcome("rejected", self.config, errors=[str(p) for p in error.problems])
        new = self.config.with_instruments(instruments)
        self._raw_hash = raw_hash(new)
        if new.config_hash == self.config.config_hash:
            return ReloadOutcome("unchanged", self.config)
        added, removed = diff_instruments(self.config, new)
        self.config = new
        return ReloadOutcome("applied", new, added, removed)

    def changed_and_settled(self) -> bool:
        """For the periodic check behind the watcher: True when the file's bytes differ
        from the last version judged AND were the same at the previous sample, so a
        file caught mid-write is only judged once it has stopped changing."""
        sample = raw_hash(self.config)
        settled = sample == self._last_sample
        self._last_sample = sample
        return settled and sample != self._raw_hash


def raw_hash(config: LoadedConfig) -> str:
    """A hash of the file's bytes as they are now ('' when it cannot be read)."""
    try:
        return hashlib.sha256(read_bounded(config.instruments_path)).hexdigest()
    except ConfigError:
        return ""
