"""journald priorities for the JSON lines on stdout, and plain JSON everywhere else.

Under systemd, stdout is a stream to journald, which reads a line that starts with a
kernel-style `<N>` as syslog priority N and strips the prefix (sd-daemon(3)), so
`journalctl -p warning` shows exactly the warnings and errors. Anywhere else (a terminal, a
pipe into jq, a file, FreeBSD's daemon(8) and syslog) the lines stay plain JSON.

"Under journald" means $JOURNAL_STREAM ("DEVICE:INODE" of the stream systemd connected,
systemd.exec(5)) names the very stream we write to. The variable alone is not enough: it
is inherited, so a shell started from a desktop session, or a command run by a unit's
script with its output redirected, has it while its stdout is a terminal, a pipe or a file.
(When stdout and stderr are two journal streams systemd names stderr's; the shipped unit
gives both one stream, deploy/systemd/regime-trader.service.)

Workers write plain JSON into their pipe to the supervisor (a pipe never matches), and the
supervisor's relay (supervisor/output_relay.py) adds the prefix from each line's `level`:
the one process whose stdout journald reads decides, and the pipe stays JSON for whatever
reads a worker directly (the bench harnesses, tests).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping, MutableMapping
from typing import IO, Any, Protocol

JOURNAL_ENV = "JOURNAL_STREAM"
# syslog(3) priorities by structlog level ("exception" arrives as "error", "warn" as "warning").
PRIORITIES = {"critical": 2, "error": 3, "warning": 4, "info": 6, "debug": 7}
# A line with no level of ours (console format, a stray print) is marked info rather than
# left bare, so text that happens to start with "<3>" is never read as a priority.
DEFAULT_PRIORITY = 6


class Renderer(Protocol):
    def __call__(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> str: ...


def writes_to_journal(stream: IO[Any], environ: Mapping[str, str] | None = None) -> bool:
    """Whether `stream` is the journal stream systemd gave this process."""
    value = (os.environ if environ is None else environ).get(JOURNAL_ENV, "")
    device, _, inode = value.partition(":")
    if not (device.isdigit() and inode.isdigit()):
        return False
    try:
        info = os.fstat(stream.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        return False  # no descriptor (an in-memory stream) or a closed one: not the journal
    return (info.st_dev, info.st_ino) == (int(device), int(inode))


def prefix(level: object) -> str:
    """`<N>` for a structlog level name."""
    return f"<{PRIORITIES.get(str(level), DEFAULT_PRIORITY)}>"


class PriorityPrefix:
    """Wraps the last renderer of structlog's chain: the line, led by its level's priority."""

    def __init__(self, renderer: Renderer) -> None:
        self._renderer = renderer

    def __call__(self, logger: Any, method: str, event: MutableMapping[str, Any]) -> str:
        level = event.get("level", method)
        return prefix(level) + self._renderer(logger, method, event)


def relayed_line(line: bytes) -> bytes:
    """A worker's line, led by the priority of its JSON `level`."""
    return prefix(level_of(line)).encode() + line


def level_of(line: bytes) -> object:
    try:
        parsed = json.loads(line)
    except ValueError:  # not JSON (console format, a stray print): no level of ours
        return None
    return parsed.get("level") if isinstance(parsed, dict) else None
