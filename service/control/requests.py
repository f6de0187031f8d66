"""The control file: `<state_dir>/control/<ACCOUNT>.json`, one request per account.

    {"mode": "paused", "requested_at": "2026-12-01T15:32:58+00:00", "by": "ops",
     "source": "command"}

Written atomically (a temporary file, then a rename), so a reader sees the old request
or the new one, never a part. No file means `running`. Nothing here knows about processes.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, get_args

Mode = Literal["running", "paused", "flatten"]
MODES: tuple[str, ...] = get_args(Mode)
CONTROL_DIR = "control"


class ControlFileError(ValueError):
    """A control file that is not a request we wrote (edited by hand, or foreign)."""


@dataclass(frozen=True)
class ControlRequest:
    mode: Mode
    requested_at: str  # ISO 8601, UTC
    by: str  # the user who asked
    source: str = "command"  # or "flatten": the worker's own rewrite once flat

    @property
    def trading(self) -> bool:
        return self.mode == "running"


RUNNING = ControlRequest("running", "", "", "default")  # no file: trade normally


def request(mode: Mode, by: str, source: str = "command") -> ControlRequest:
    return ControlRequest(mode, datetime.now(UTC).isoformat(), by, source)


def control_path(state_dir: Path, account: str) -> Path:
    return state_dir / CONTROL_DIR / f"{account}.json"


def write_request(state_dir: Path, account: str, wanted: ControlRequest) -> Path:
    """Atomically: a temporary file in the same folder, then a rename over the old one."""
    path = control_path(state_dir, account)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps(asdict(wanted)) + "\n", encoding="utf-8")
    os.replace(partial, path)
    return path


def read_request(state_dir: Path, account: str) -> ControlRequest:
    """The account's request; RUNNING when it has no file. ControlFileError says what is
    wrong with one that cannot be read as a request."""
    path = control_path(state_dir, account)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return RUNNING
    except (OSError, UnicodeDecodeError) as error:
        raise ControlFileError(f"{path}: {error}") from error
    return parse_request(text, path)


def parse_request(text: str, path: Path) -> ControlRequest:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ControlFileError(f"{path}: not JSON: {error}") from error
    if not isinstance(document, dict) or document.get("mode") not in MODES:
        raise ControlFileError(f"{path}: expected an object with mode = one of {MODES}")
    fields = {k: str(document.get(k, "")) for k in ("requested_at", "by")}
    return ControlRequest(document["mode"], **fields,
                          source=str(document.get("source", "command")))
