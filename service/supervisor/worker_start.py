"""Starting a worker process: without the systemd notify socket in its environment (only
the main process talks to systemd), and with the seq at which --stop-after ends it."""

from __future__ import annotations

import os
from pathlib import Path

from service.state.paths import state_path
from service.state.reader import last_seq
from service.supervisor.sd_notify import forget_notify_env
from service.supervisor.worker_handle import WorkerHandle
from service.worker.spec import WorkerSpec


def start_worker(worker: WorkerHandle, spec: WorkerSpec) -> None:
    saved = dict(os.environ)
    forget_notify_env(os.environ)  # only the main process talks to systemd
    try:
        worker.spawn(spec)
    finally:
        os.environ.update(saved)


def stop_at_seq(state_dir: Path, account: str, stop_after: int | None) -> int | None:
    """--stop-after N counts from where the account's state stands at start-up."""
    if stop_after is None:
        return None
    return last_seq(state_path(state_dir, account)) + stop_after
