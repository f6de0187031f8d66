"""What the running daemon says about itself: the supervisor, and per account its
worker's state, last update and last error.

Kept in memory from the supervisor's worker handles and the log events it sees
(service/event_tap.py), served by the HTTP endpoint, and written once a second into the
state directory (service/state/runtime_file.py), so `regime-trader status` can tell a
running daemon from a stopped one by the heartbeat's age, without asking it anything.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from service import __version__
from service.state.runtime_file import write_runtime
from service.supervisor.worker_handle import WorkerHandle

WRITE_EVERY_S = 1.0  # the heartbeat's resolution; the loop wakes at least this often
WorkerState = Literal["starting", "running", "hung", "restarting", "parked", "retired",
                      "stopped"]


@dataclass
class AccountRuntime:
    """What the supervisor knows of one account beyond its worker handle."""

    last_update: dict[str, Any] | None = None  # seq, bar_time, at, duration_ms, orders
    last_error: dict[str, Any] | None = None  # event, at, what it said
    # the last error the worker itself logged (state.unusable, broker.auth_failed...): why
    # it exited, where last_error is the supervisor's answer (worker.exited, account.parked)
    worker_error: dict[str, Any] | None = None
    parked_reason: str | None = None
    updates: int = 0  # completed since the supervisor started


def worker_state(worker: WorkerHandle) -> WorkerState:
    if worker.parked:
        return "parked"
    if worker.retired and not worker.alive:
        return "retired"
    if worker.alive:
        return "hung" if worker.escalation.steps else ("running" if worker.started
                                                       else "starting")
    return "restarting" if worker.restart_at is not None else "stopped"


class RuntimeStatus:
    """An observer of the supervisor's events; `document` is the daemon's own account."""

    def __init__(
        self, state_dir: Path, config_hash: str, http: str | None = None, shard: str | None = None
    ) -> None:
        self.state_dir = state_dir
        self.config_hash = config_hash
        self.http = http
        self.shard = shard  # "I/N" when the daemon runs one shard's accounts
        self.started_at = _now()
        self.accounts: dict[str, AccountRuntime] = {}
        self.paused: set[str] = set()  # accounts the operator paused (service.control)
        self.stopping = False
        self._next_write = 0.0
        # the shared device process's state (supervisor/device_handle.py), where there is one
        self.device: Callable[[], dict[str, Any]] | None = None

    def on_event(self, event: dict[str, Any]) -> None:
        account = event.get("account")
        if not isinstance(account, str):
            return
        runtime = self.accounts.setdefault(account, AccountRuntime())
        name = event.get("event")
        if name == "update.completed":
            runtime.updates += 1
            runtime.last_update = {k: event.get(k) for k in _UPDATE_KEYS}
            runtime.last_update["at"] = event.get("timestamp")
        elif name == "account.parked":
            runtime.parked_reason = str(event.get("reason"))
        if event.get("level") in ("error", "critical"):
            runtime.last_error = _error_of(event)
            if event.get("pid") != os.getpid():  # a worker's own, not the supervisor's
                runtime.worker_error = runtime.last_error

    def document(self, workers: Iterable[WorkerHandle]) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "version": __version__,
            "started_at": self.started_at,
            "heartbeat_at": _now(),
            "config_hash": self.config_hash,
            "http": self.http,
            "shard": self.shard,
            "stopping": self.stopping,
            "device": self.device() if self.device is not None else None,
            "accounts": {w.account: self._account(w) for w in workers},
        }

    def _account(self, worker: WorkerHandle) -> dict[str, Any]:
        runtime = self.accounts.setdefault(worker.account, AccountRuntime())
        state = worker_state(worker)
        return {
            "state": state,
            "paused": worker.account in self.paused,
            "reason": runtime.parked_reason if state == "parked" else None,
            "worker_pid": worker.pid,
            "restarts": worker.restarts,
            "last_seq": worker.last_seq,
            **asdict(runtime),
        }

    def tick(self, now: float, workers: Iterable[WorkerHandle]) -> None:
        """Write the file once a second (its age is the supervisor's heartbeat)."""
        if now < self._next_write:
            return
        self._next_write = now + WRITE_EVERY_S
        write_runtime(self.state_dir, self.document(workers))

    def final(self, workers: Iterable[WorkerHandle]) -> None:
        """At a clean stop: the last word, with when it stopped (a killed supervisor
        leaves its last heartbeat, which ages)."""
        write_runtime(self.state_dir, {**self.document(workers), "stopped_at": _now()})


_ERROR_KEYS = ("reason", "error", "exit_code", "signal")
_UPDATE_KEYS = ("seq", "bar_time", "duration_ms", "orders", "divergences", "instruments")


def _error_of(event: dict[str, Any]) -> dict[str, Any]:
    said = {str(k): event[k] for k in _ERROR_KEYS if k in event}
    return {"event": event.get("event"), "at": event.get("timestamp"), **said}


def _now() -> str:
    return datetime.now(UTC).isoformat()
