"""One daemon per state directory: an exclusive flock on `daemon.lock`, held for the
supervisor's life, with the holder's pid written in it for the one that is refused.

flock, not a pid file: the kernel drops the lock when its holder dies, however it dies,
so a stale file never blocks the next start. The descriptor is close-on-exec, so workers
(started with spawn) do not inherit it. `lock_holder` (service.state.paths, for `status`)
tests it without keeping it.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from service.state.paths import LOCK_NAME, lock_holder, read_lock_pid
from service.state.storage_faults import unavailable

__all__ = ["LOCK_NAME", "StateDirLockedError", "hold_state_lock", "lock_holder"]
# `status` probes the lock with a shared flock held for microseconds: a start that meets
# one tries again for this long before it calls the directory taken.
PROBE_GRACE_S = 0.1


class StateDirLockedError(Exception):
    """Another daemon holds the state directory; temporary (exit 75): it may stop."""

    def __init__(self, lock_path: Path, holder_pid: int | None) -> None:
        holder = f"pid {holder_pid}" if holder_pid else "a process that wrote no pid yet"
        super().__init__(
            f"{lock_path.parent}: another regime-trader ({holder}) is running on this "
            f"state directory (it holds {lock_path}); stop it first, or give this one "
            "another --state-dir"
        )
        self.lock_path, self.holder_pid = lock_path, holder_pid


@contextmanager
def hold_state_lock(state_dir: Path) -> Iterator[Path]:
    """Hold the state directory's lock for the `with` block; StateDirLockedError when
    another process holds it, StateUnavailableError when the file cannot be made."""
    path = state_dir / LOCK_NAME
    fd = _open_lock_file(path)
    try:
        _take(fd, path)
        _write_pid(fd)
        yield path
    finally:
        os.close(fd)  # releases the lock; the file stays (removing it would race)


def _open_lock_file(path: Path) -> int:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as error:
        raise unavailable(path, "the state directory's lock file cannot be opened",
                          error) from None


def _take(fd: int, path: Path) -> None:
    deadline = time.monotonic() + PROBE_GRACE_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise StateDirLockedError(path, read_lock_pid(fd)) from None
            time.sleep(0.005)


def _write_pid(fd: int) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
