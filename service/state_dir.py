"""Where the per-account databases live: one rule for every command that reads them.

In order: `--state-dir`; `$STATE_DIRECTORY` (systemd's StateDirectory=); the settings'
`state_dir` (relative to service.toml); `$XDG_STATE_HOME/regime-trader`; and
`~/.local/state/regime-trader`. Never the current directory: `status` run from another
folder must find the same databases as the daemon.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

APP_DIR = "regime-trader"


class Configured(Protocol):
    """A loaded configuration (service.config_loader.LoadedConfig) or its validated
    summary (service.config_summary.ConfigSummary): either says where `state_dir` points."""

    @property
    def state_dir_setting(self) -> Path | None: ...


def resolve_state_dir(
    flag: Path | None, config: Configured, environ: Mapping[str, str] | None = None
) -> Path:
    """The state directory, by the rule above (an absolute path)."""
    env = os.environ if environ is None else environ
    if flag is not None:
        return flag.resolve()
    from_systemd = env.get("STATE_DIRECTORY", "").split(":")[0]
    if from_systemd:
        return Path(from_systemd)
    if config.state_dir_setting is not None:
        return config.state_dir_setting
    return default_state_dir(env)


def default_state_dir(env: Mapping[str, str]) -> Path:
    """$XDG_STATE_HOME/regime-trader, else ~/.local/state/regime-trader (the XDG base
    directory rule: a relative $XDG_STATE_HOME is ignored)."""
    xdg = env.get("XDG_STATE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / APP_DIR
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".local" / "state" / APP_DIR
