"""Starting a worker (or the device) process: without the systemd notify socket in its
environment (only the main process talks to systemd), and with the seq at which
--stop-after ends it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from service.state.paths import state_path
from service.state.reader import last_seq
from service.supervisor.sd_notify import forget_notify_env
from service.supervisor.worker_handle import WorkerHandle
from service.worker.spec import WorkerSpec


@contextlib.contextmanager
def child_environment() -> Iterator[None]:
    """Around a child's start: the environment without the systemd notify socket (only the
    main process talks to systemd), restored after."""
    saved = dict(os.environ)
    forget_notify_env(os.environ)
    try:
        yield
    finally:
        os.environ.update(saved)


def start_worker(worker: WorkerHandle, spec: WorkerSpec) -> None:
    with child_environment():
        worker.spawn(spec)


def stop_at_seq(state_dir: Path, account: str, stop_after: int | None) -> int | None:
    """--stop-after N counts from where the account's state stands at start-up."""
    if stop_after is None:
        return None
    return last_seq(state_path(state_dir, account)) + stop_after
