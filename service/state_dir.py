"""Where the per-account databases live: one rule for every command that reads them."""

from __future__ import annotations

import os
from pathlib import Path

from service.config_loader import LoadedConfig


def resolve_state_dir(flag: Path | None, config: LoadedConfig) -> Path:
    """--state-dir, else $STATE_DIRECTORY (set by systemd), else the config, else ./var/state."""
    if flag is not None:
        return flag.resolve()
    from_systemd = os.environ.get("STATE_DIRECTORY", "").split(":")[0]
    if from_systemd:
        return Path(from_systemd)
    if config.settings.state_dir is not None:
        return config.settings.state_dir.resolve()
    return Path("var/state").resolve()
