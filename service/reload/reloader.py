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
    repeat: bool = False  # rejected: the same content as the last rejection


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
    """Holds the configuration in force and judges each new version of the file.

    Every version judged, good or bad, is remembered by its hash: the periodic check
    does not judge the same bytes twice, and a rejection is marked `repeat` when the
    same content (or the same unreadable file) was the last one rejected."""

    def __init__(self, config: LoadedConfig) -> None:
        self.config = config
        self._judged = raw_hash(config)  # the bytes last judged ('' when unreadable)
        self._last_sample: str | None = self._judged
        self._rejected: str | None = None  # what the last rejection was about

    def check(self) -> ReloadOutcome:
        path = self.config.instruments_path
        try:
            raw = read_bounded(path)
        except ConfigError as error:
            self._judged = ""
            return self._reject(_sha256(str(error).encode()), error)
        self._judged = _sha256(raw)
        try:
            instruments = load_instruments(path, self.config.settings, raw)
        except ConfigError as error:
            return self._reject(self._judged, error)
        self._rejected = None
        return self._accept(self.config.with_instruments(instruments))

    def _reject(self, key: str, error: ConfigError) -> ReloadOutcome:
        repeat, self._rejected = key == self._rejected, key
        errors = [str(p) for p in error.problems]
        return ReloadOutcome("rejected", self.config, errors=errors, repeat=repeat)

    def _accept(self, new: LoadedConfig) -> ReloadOutcome:
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
        return settled and sample != self._judged


def raw_hash(config: LoadedConfig) -> str:
    """A hash of the file's bytes as they are now ('' when it cannot be read)."""
    try:
        return _sha256(read_bounded(config.instruments_path))
    except ConfigError:
        return ""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
