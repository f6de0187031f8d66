"""Configurations already validated, remembered so that `status` need not validate the
same bytes again (service/config_summary.py says why that matters).

An entry is keyed by the SHA-256 of the rules (the size and modification time of every
module of the `service` package itself, where the settings and their checks live), the
settings file's resolved path and the SHA-256 of its bytes; it holds the instruments
file's path, the SHA-256 of its bytes, and the ConfigSummary. A hit needs both files byte
for byte as they were validated, by the same code. Anything else (an edit, an upgrade, a
missing, unreadable or malformed entry) is a miss, and the caller validates as always. A
configuration that fails validation is never remembered, so a bad file is reported every
time. Only LoadedConfigs that load_config made carry the digests of the bytes they were
validated from (`source_sha256`), so nothing is remembered that was not read at once.

Where: $XDG_CACHE_HOME/regime-trader/validated, else ~/.cache/regime-trader/validated
(the XDG rule: a relative $XDG_CACHE_HOME is ignored), private to the user, each entry
written atomically. It is an optimisation: failing to read or write it is never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from service.config_files import MAX_CONFIG_BYTES, settings_file
from service.config_summary import ConfigSummary

if TYPE_CHECKING:
    from service.config_loader import LoadedConfig

CACHE_FOLDER = Path("regime-trader") / "validated"
KEEP_ENTRIES = 64  # the newest; an entry is a few hundred bytes, and a user has few configs
_PACKAGE = Path(__file__).resolve().parent


def recall(path: Path | None, env: Mapping[str, str] | None = None) -> ConfigSummary | None:
    """The summary of the configuration at `path` (None: the embedded default) if these
    very bytes were validated by this code before; else None."""
    try:
        _, settings_path = settings_file(path)
        entry_path = _entry_path(settings_path, _digest(settings_path), env)
        if entry_path is None:
            return None
        entry = json.loads(entry_path.read_text(encoding="utf-8"))
        if _digest(Path(entry["instruments_path"])) != entry["instruments_sha256"]:
            return None
        return ConfigSummary.from_json(entry["summary"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember(config: LoadedConfig, env: Mapping[str, str] | None = None) -> None:
    """Record `config`, validated from the bytes whose digests it carries."""
    if config.source_sha256 is None:
        return
    settings_sha256, instruments_sha256 = config.source_sha256
    entry_path = _entry_path(config.settings_path, settings_sha256, env)
    if entry_path is None:
        return
    entry = {
        "settings_path": str(config.settings_path),
        "instruments_path": str(config.instruments_path),
        "instruments_sha256": instruments_sha256,
        "summary": config.summary().to_json(),
    }
    with contextlib.suppress(OSError):
        entry_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry_path.parent, prefix=".entry-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(entry, handle)
            os.replace(tmp, entry_path)
        except OSError:
            os.unlink(tmp)
            raise
        _prune(entry_path.parent)


def _prune(folder: Path) -> None:
    """Keep the KEEP_ENTRIES newest entries (every temporary folder a test or a bench
    configures adds one)."""
    entries = sorted(folder.glob("*.json"), key=lambda e: e.stat().st_mtime_ns, reverse=True)
    for stale in entries[KEEP_ENTRIES:]:
        stale.unlink(missing_ok=True)


def _digest(path: Path) -> str:
    """The SHA-256 of a regular file's bytes; OSError for anything else or a huge file."""
    with open(path, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_CONFIG_BYTES:
            raise OSError(f"{path}: not a regular file of at most {MAX_CONFIG_BYTES} bytes")
        return hashlib.sha256(handle.read(MAX_CONFIG_BYTES + 1)).hexdigest()


def _entry_path(settings_path: Path, settings_sha256: str, env: Mapping[str, str] | None
                ) -> Path | None:
    folder = _cache_dir(os.environ if env is None else env)
    if folder is None:
        return None
    key = hashlib.sha256(
        f"{_rules_stamp()}\0{settings_path}\0{settings_sha256}".encode()).hexdigest()
    return folder / f"{key[:32]}.json"


def _cache_dir(env: Mapping[str, str]) -> Path | None:
    xdg = env.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / CACHE_FOLDER
    home = env.get("HOME", "")
    return Path(home) / ".cache" / CACHE_FOLDER if home else None


def _rules_stamp() -> str:
    """The `service` package's own modules, by name, size and modification time: an
    upgrade or an edit of the rules changes it."""
    parts = []
    for module in sorted(_PACKAGE.glob("*.py")):
        info = module.stat()
        parts.append(f"{module.name}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()
