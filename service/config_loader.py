"""Read, parse and validate the settings and instruments files, all or nothing.

Every problem is reported with the file, the key and what to do, and nothing is applied
until the whole configuration is valid.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from service.instruments import InstrumentsFile
from service.settings import ServiceSettings

# The shipped embedded default lives in the checkout's config/ folder.
DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "config" / "service.toml"
MAX_CONFIG_BYTES = 4 * 1024 * 1024

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class ConfigProblem:
    file: str
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.key}: {self.message}"


class ConfigError(Exception):
    """The configuration is invalid; `problems` lists every reason."""

    def __init__(self, problems: list[ConfigProblem]) -> None:
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


@dataclass(frozen=True)
class LoadedConfig:
    settings: ServiceSettings
    instruments: InstrumentsFile
    settings_path: Path
    instruments_path: Path
    settings_hash: str
    instruments_hash: str

    def with_instruments(self, instruments: InstrumentsFile) -> LoadedConfig:
        """The same settings with a new, already validated, instruments file."""
        return replace(self, instruments=instruments, instruments_hash=content_hash(instruments))

    @property
    def active_accounts(self) -> tuple[str, ...]:
        """Accounts that have instruments, in the settings' order: each gets a worker."""
        return tuple(a for a in self.settings.account_names if a in self.instruments.accounts)

    @property
    def config_hash(self) -> str:
        """One short hash of both files' validated content (stored in every checkpoint)."""
        both = f"{self.settings_hash}:{self.instruments_hash}".encode()
        return hashlib.sha256(both).hexdigest()[:16]


def load_config(path: Path | None = None) -> LoadedConfig:
    settings_path = (path or DEFAULT_CONFIG).resolve()
    settings = parse_model(settings_path, ServiceSettings)
    instruments_path = resolve_beside(settings_path, settings.instruments_file)
    instruments = load_instruments(instruments_path, settings)
    return LoadedConfig(
        settings=settings,
        instruments=instruments,
        settings_path=settings_path,
        instruments_path=instruments_path,
        settings_hash=content_hash(settings),
        instruments_hash=content_hash(instruments),
    )


def load_instruments(path: Path, settings: ServiceSettings) -> InstrumentsFile:
    instruments = parse_model(path, InstrumentsFile)
    check_accounts_match(path, instruments, settings)
    return instruments


def resolve_beside(anchor_file: Path, path: Path) -> Path:
    """Relative paths in a config file are relative to that file's folder."""
    return path if path.is_absolute() else (anchor_file.parent / path).resolve()


def content_hash(model: BaseModel) -> str:
    canonical = json.dumps(model.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def parse_model(path: Path, model: type[M]) -> M:
    data = read_toml(path)
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise ConfigError([_problem(path, e) for e in error.errors()]) from None


def read_toml(path: Path) -> dict[str, Any]:
    raw = read_bounded(path)
    if not raw.strip():
        raise ConfigError([ConfigProblem(str(path), "(file)", "the file is empty")])
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        msg = f"not UTF-8 text (byte {error.start}); is this the right file?"
        raise ConfigError([ConfigProblem(str(path), "(file)", msg)]) from None
    except tomllib.TOMLDecodeError as error:
        msg = f"TOML syntax error: {error}; fix the syntax and save again"
        raise ConfigError([ConfigProblem(str(path), "(syntax)", msg)]) from None


def read_bounded(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as error:
        msg = f"cannot read it ({error.strerror}); check the path and its permissions"
        raise ConfigError([ConfigProblem(str(path), "(file)", msg)]) from None
    if len(raw) > MAX_CONFIG_BYTES:
        msg = f"larger than {MAX_CONFIG_BYTES // 1024 // 1024} MiB; is this the right file?"
        raise ConfigError([ConfigProblem(str(path), "(file)", msg)])
    return raw


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
