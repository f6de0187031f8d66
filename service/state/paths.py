"""The files of a state directory, and who holds its daemon lock.

Light on purpose (the standard library alone): `status`, the supervisor and the worker all
name these files, and `status` must start fast.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_NAME = "daemon.lock"  # flocked by the supervisor for its life, its pid written in it
TURNS_NAME = "bar-turns.lock"  # flocked by each worker's bar (service/worker/sampler_turn.py)


def state_path(state_dir: Path, account: str) -> Path:
    """The account's state database."""
    return state_dir / f"{account}.sqlite"


def sim_broker_path(state_dir: Path, account: str) -> Path:
    """The simulated broker's own book of the account (a stand-in for a remote broker)."""
    return state_dir / f"{account}.sim-broker.sqlite"


def lock_holder(state_dir: Path) -> int | None:
    """The pid of the process holding the state directory's lock; None when none does.

    0 when it is held but the holder has not written its pid yet (a moment at its start).
    Tests the lock without keeping it: a shared, non-blocking flock on a read-only
    descriptor, released at once; never creates the file. A daemon starting in that
    instant retries (service.supervisor.state_lock), so the probe cannot refuse it.
    """
    try:
        fd = os.open(state_dir / LOCK_NAME, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return read_lock_pid(fd) or 0
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def read_lock_pid(fd: int) -> int | None:
    """The pid written in an open lock file; None when there is none yet."""
    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return int(text) if text.isdigit() else None
