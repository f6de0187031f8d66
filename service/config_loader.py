"""Read, parse and validate the settings and instruments files, all or nothing.

Every problem is reported with the file, the key and what to do, and nothing is applied
until the whole configuration is valid.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from service.config_files import (
    MAX_CONFIG_BYTES,
    ConfigError,
    ConfigProblem,
    resolve_beside,
    settings_file,
)
from service.config_summary import ConfigSummary
from service.instruments import InstrumentsFile
from service.settings import ServiceSettings
from service.sharding import Shard, parse_shard

# ConfigError, ConfigProblem and resolve_beside live in service/config_files.py (no
# pydantic there, for `status`); they are part of this module's interface too.
__all__ = [
    "MAX_CONFIG_BYTES", "MAX_NESTING", "ConfigError", "ConfigProblem", "LoadedConfig",
    "check_accounts_match", "content_hash", "load_config", "load_instruments",
    "nesting_depth", "parse_model", "parse_toml", "read_bounded", "resolve_beside",
]

# Our files nest three levels (market.alpaca.replay_start); anything far deeper is not one
# of ours, and the limit keeps every later step (validation, hashing) off deep recursion.
MAX_NESTING = 16
# O_NONBLOCK: opening a FIFO that was swapped in after the check must not wait for a writer.
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_FILE_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class LoadedConfig:
    settings: ServiceSettings
    instruments: InstrumentsFile
    settings_path: Path
    instruments_path: Path
    settings_hash: str
    instruments_hash: str
    # SHA-256 of the two files' bytes as validated (load_config only): service/config_cache.py
    source_sha256: tuple[str, str] | None = None

    def with_instruments(self, instruments: InstrumentsFile) -> LoadedConfig:
        """The same settings with a new, already validated, instruments file."""
        return replace(self, instruments=instruments, instruments_hash=content_hash(instruments),
                       source_sha256=None)

    def with_shard(self, shard: str | None) -> LoadedConfig:
        """The same configuration run as shard `shard` ("I/N", `run --shard`; None keeps
        the settings' own). ShardError (a ValueError) says what is wrong with it."""
        if shard is None:
            return self
        update = {"shard": str(parse_shard(shard))}
        # no longer the files' own settings: not to be remembered as theirs (config_cache)
        return replace(self, settings=self.settings.model_copy(update=update),
                       source_sha256=None)

    @property
    def shard(self) -> Shard | None:
        """The shard this daemon runs (None: every account): service/sharding.py."""
        text = self.settings.shard
        return None if text is None else parse_shard(text)

    def summary(self) -> ConfigSummary:
        """What `status` needs of this configuration, in plain values."""
        settings = self.settings
        return ConfigSummary(
            accounts=tuple(settings.account_names),
            instrumented=frozenset(self.instruments.accounts),
            shard=settings.shard,
            broker_kind=settings.broker.kind,
            state_dir_setting=self.state_dir_setting,
            config_hash=self.config_hash,
        )

    @property
    def shard_accounts(self) -> tuple[str, ...]:
        """The settings' accounts in this daemon's shard (all without one), in their order
        (the rule is ConfigSummary's, which `status` reads without the settings' models)."""
        return self.summary().shard_accounts

    @property
    def active_accounts(self) -> tuple[str, ...]:
        """This shard's accounts that have instruments, in the settings' order: each gets a
        worker, at start and when a reload gives it instruments."""
        return self.summary().active_accounts

    @property
    def state_dir_setting(self) -> Path | None:
        """The settings' `state_dir`, made absolute beside service.toml; None if unset."""
        configured = self.settings.state_dir
        return None if configured is None else resolve_beside(self.settings_path,
                                                                 configured).absolute()

    @property
    def config_hash(self) -> str:
        """One short hash of both files' validated content (stored in every checkpoint)."""
        both = f"{self.settings_hash}:{self.instruments_hash}".encode()
        return hashlib.sha256(both).hexdigest()[:16]


def load_config(path: Path | None = None) -> LoadedConfig:
    given, settings_path = settings_file(path)  # errors name the path given
    raw_settings = read_bounded(given)
    settings = parse_model(given, ServiceSettings, raw_settings)
    instruments_path = resolve_beside(settings_path, settings.instruments_file)
    raw_instruments = read_bounded(instruments_path)
    instruments = load_instruments(instruments_path, settings, raw_instruments)
    return LoadedConfig(
        settings=settings,
        instruments=instruments,
        settings_path=settings_path,
        instruments_path=instruments_path,
        settings_hash=content_hash(settings),
        instruments_hash=content_hash(instruments),
        source_sha256=(hashlib.sha256(raw_settings).hexdigest(),
                       hashlib.sha256(raw_instruments).hexdigest()),
    )


def load_instruments(
    path: Path, settings: ServiceSettings, raw: bytes | None = None
) -> InstrumentsFile:
    """Read (or take `raw`, the bytes already read), parse and check the instruments file."""
    instruments = parse_model(path, InstrumentsFile, raw)
    check_accounts_match(path, instruments, settings)
    return instruments


def content_hash(model: BaseModel) -> str:
    canonical = json.dumps(model.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def parse_model(path: Path, model: type[M], raw: bytes | None = None) -> M:
    """Validate the file at `path` (or `raw`, its bytes already read) as `model`."""
    data = parse_toml(path, read_bounded(path) if raw is None else raw)
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise ConfigError([_problem(path, e) for e in error.errors()]) from None


def parse_toml(path: Path, raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        raise _file_error(path, "the file is empty")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        msg = f"not UTF-8 text (byte {error.start}); is this the right file?"
        raise _file_error(path, msg) from None
    except tomllib.TOMLDecodeError as error:
        msg = f"TOML syntax error: {error}; fix the syntax and save again"
        raise ConfigError([ConfigProblem(str(path), "(syntax)", msg)]) from None
    except ValueError as error:
        # tomllib lets int()'s own refusal through: an integer of thousands of digits.
        raise _file_error(path, f"a value cannot be read ({error}); check the numbers") from None
    except RecursionError:
        # tomllib recurses once per nesting level: a file nested deeper than the
        # interpreter's stack is refused like any other malformed file.
        raise _too_deep(path) from None
    if nesting_depth(data) > MAX_NESTING:
        raise _too_deep(path)
    return data


def nesting_depth(data: object) -> int:
    """How deeply tables and arrays nest in `data`, without recursing."""
    deepest, pending = 0, [(data, 0)]
    while pending:
        value, depth = pending.pop()
        deepest = max(deepest, depth)
        if depth > MAX_NESTING:
            break  # deep enough to refuse: stop before walking a huge structure
        if isinstance(value, dict):
            pending.extend((child, depth + 1) for child in value.values())
        elif isinstance(value, list):
            pending.extend((child, depth + 1) for child in value)
    return deepest


def _too_deep(path: Path) -> ConfigError:
    msg = f"tables and arrays nested more than {MAX_NESTING} deep; is this the right file?"
    return _file_error(path, msg)


def _file_error(path: Path, message: str) -> ConfigError:
    return ConfigError([ConfigProblem(str(path), "(file)", message)])


def read_bounded(path: Path) -> bytes:
    """The file's bytes, refusing anything but a regular file of at most MAX_CONFIG_BYTES.

    Checked before opening (a FIFO or a device would block or never end), then opened
    without blocking and checked again on the descriptor, in case the path was swapped
    for something else in between."""
    try:
        _check_regular(path, os.stat(path))
        with os.fdopen(os.open(path, _OPEN_FLAGS), "rb") as handle:
            _check_regular(path, os.fstat(handle.fileno()))
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as error:
        raise _unreadable(path, error) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise _file_error(path, _too_large())
    return raw


def _check_regular(path: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        kind = _FILE_KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
        raise _file_error(path, f"cannot read it: it is {kind}; point it at a TOML file")
    if info.st_size > MAX_CONFIG_BYTES:
        raise _file_error(path, _too_large())


def _too_large() -> str:
    size = f"{MAX_CONFIG_BYTES // 1024 // 1024} MiB"
    return f"cannot read it: larger than {size}; is this the right file?"


def _unreadable(path: Path, error: OSError) -> ConfigError:
    msg = f"cannot read it ({error.strerror}); check the path and its permissions"
    return _file_error(path, msg)


def check_accounts_match(
    path: Path, instruments: InstrumentsFile, settings: ServiceSettings
) -> None:
    known = set(settings.account_names)
    problems = [
        ConfigProblem(
            str(path),
            f"accounts.{name}",
            f"unknown account; the settings define {', '.join(sorted(known))}: "
            "add it to service.toml or fix the name",
        )
        for name in instruments.accounts
        if name not in known
    ]
    if problems:
        raise ConfigError(problems)


def _problem(path: Path, error: Any) -> ConfigProblem:
    key = ".".join(str(part) for part in error["loc"]) or "(top level)"
    message = str(error["msg"])
    if error["type"] == "extra_forbidden":
        message = "unknown key; check its spelling against the documented settings"
    elif error["type"] == "missing":
        message = "required key is missing; add it"
    return ConfigProblem(str(path), key, message)
