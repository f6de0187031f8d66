"""The running daemon's self-description in the state directory (RUNTIME_FILE).

The supervisor rewrites it once a second (service/supervisor/runtime_status.py); its
`heartbeat_at` is how `status` tells a running daemon from a stopped or killed one. Kept
apart from the supervisor so that readers import nothing heavy.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

RUNTIME_FILE = "daemon.status.json"


def write_runtime(state_dir: Path, document: dict[str, Any]) -> None:
    """Atomically: a reader sees the previous document or this one, never a part."""
    path = state_dir / RUNTIME_FILE
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps(document, indent=1), encoding="utf-8")
    os.replace(partial, path)


def read_runtime(state_dir: Path) -> dict[str, Any] | None:
    """The last document written, or None where no daemon ever ran here."""
    try:
        text = (state_dir / RUNTIME_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    document = json.loads(text)
    if not isinstance(document, dict):
        raise ValueError(f"{state_dir / RUNTIME_FILE}: not a JSON object")
    return document
