"""Where the configuration files are, and how a problem with them is told: the part of
loading a configuration that needs no validation library, so that a command answering
from a validated summary (`status`, service/config_cache.py) loads none.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

MAX_CONFIG_BYTES = 4 * 1024 * 1024  # either file; a larger one is refused, not read


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


def default_config_path() -> Path:
    """The embedded default as a file on disk (the reloader watches the instruments file
    beside it); ConfigError when the package is not on a filesystem (a zip import)."""
    default = files("service").joinpath("defaults", "service.toml")
    if isinstance(default, Path):
        return default
    raise ConfigError([ConfigProblem(str(default), "--config", (
        "the embedded default is inside an archive, not a file on disk, and the daemon "
        "watches the instruments file beside it: pass --config PATH/service.toml"))])


def settings_file(path: Path | None) -> tuple[Path, Path]:
    """The settings file as given (absolute: errors name it) and as read (symlinks
    resolved: what the configuration's hash and every relative path hang on)."""
    given = Path(os.path.abspath(path or default_config_path()))
    return given, Path(os.path.realpath(given))


def resolve_beside(anchor_file: Path, path: Path) -> Path:
    """Relative paths in a config file are relative to that file's folder."""
    # Not resolved: a symlink named here is read (and watched) as the link, so swapping
    # the link is a change, and an error names the path as written.
    return path if path.is_absolute() else Path(os.path.normpath(anchor_file.parent / path))
