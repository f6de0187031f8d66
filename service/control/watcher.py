"""The supervisor's side of control: notice a changed control file, say so, forward it.

Polled from the supervisor's loop (it wakes at least once a second), by stat: one
`stat()` per account at most four times a second is nothing beside the loop's own work,
needs no thread, no inotify watch (none to run out of, none lost on a network
filesystem or when the folder is replaced), and a request waits for the worker's next
update anyway, so a quarter of a second changes nothing. watchfiles, which watches the
instruments file, would add a thread and a debounce for the same result.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

import structlog

from service.control.requests import (
    RUNNING,
    ControlFileError,
    ControlRequest,
    control_path,
    read_request,
    request,
)

log = structlog.get_logger("service.supervisor")
POLL_EVERY_S = 0.25
Signature = tuple[int, int, int] | None  # inode, mtime (ns), size; None: no file
Forward = Callable[[str, ControlRequest], None]


class ControlWatcher:
    def __init__(self, state_dir: Path, forward: Forward) -> None:
        self.state_dir = state_dir
        self.forward = forward  # to the account's worker, if it runs
        self.requests: dict[str, ControlRequest] = {}
        self._seen: dict[str, Signature] = {}
        self._next_poll = 0.0

    @property
    def paused(self) -> set[str]:
        """Accounts that do not trade normally (paused, or flattening)."""
        return {a for a, wanted in self.requests.items() if not wanted.trading}

    def poll(self, now: float, accounts: Iterable[str]) -> None:
        if now < self._next_poll:
            return
        self._next_poll = now + POLL_EVERY_S
        for account in accounts:
            self._check(account)

    def _check(self, account: str) -> None:
        signature = _signature(control_path(self.state_dir, account))
        first = account not in self._seen
        if not first and self._seen[account] == signature:
            return
        self._seen[account] = signature
        wanted = self._read(account)
        if wanted == self.requests.get(account, RUNNING):
            return
        self.requests[account] = wanted
        if not (first and wanted.trading):  # a resumed account at start: nothing to say
            log.info("control.applied", account=account, mode=wanted.mode, by=wanted.by,
                     requested_at=wanted.requested_at, source=wanted.source)
        self.forward(account, wanted)

    def _read(self, account: str) -> ControlRequest:
        """As the worker reads it: a file that is not a request means paused."""
        try:
            return read_request(self.state_dir, account)
        except ControlFileError as error:
            log.warning("control.invalid", account=account, reason=str(error), mode="paused",
                        next="run `regime-trader pause|resume|flatten` to rewrite the file")
            return request("paused", by="", source="unreadable control file")


def _signature(path: Path) -> Signature:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return (-1, -1, -1)  # unreadable: _read says why
    return (st.st_ino, st.st_mtime_ns, st.st_size)
