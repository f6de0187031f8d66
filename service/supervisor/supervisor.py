"""The supervisor: the main process, one worker process per account.

Signal handlers only record the signal (on a queue, with a wake-up byte); the loop
dispatches to `handle_term`. A worker that exits abnormally is started again after a short
backoff; a worker that exits 0 (stop-after reached) is done. On SIGTERM/SIGINT every
worker is asked to finish its update and checkpoint; a second signal, or the shutdown
budget running out, kills what is left.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import socket
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType
from typing import Any

import structlog

from service import __version__
from service.config_loader import LoadedConfig
from service.exit_codes import EX_OK
from service.state.reader import last_seq
from service.supervisor.sd_notify import Notifier, forget_notify_env, watchdog_interval_s
from service.worker.assembly import state_path
from service.worker.process import WorkerSpec, worker_main

log = structlog.get_logger("service.supervisor")
SPAWN = multiprocessing.get_context("spawn")


@dataclass
class WorkerSlot:
    account: str
    stop_at_seq: int | None
    process: BaseProcess | None = None
    conn: Connection | None = None
    restarts: int = 0
    restart_at: float | None = None
    done: bool = False
    started: bool = False
    last_seq: int = 0


class Supervisor:
    def __init__(self, config: LoadedConfig, state_dir: Path, stop_after: int | None) -> None:
        self.config = config
        self.state_dir = state_dir
        self.signals: queue.SimpleQueue[int] = queue.SimpleQueue()
        self.stopping = False
        self._deadline = 0.0
        self.slots = {
            name: WorkerSlot(name, _stop_at(state_dir, name, stop_after))
            for name in config.settings.account_names
        }
        self._wake_r, self._wake_w = socket.socketpair()
        self.notifier = Notifier.from_env(os.environ)
        self._watchdog_s = watchdog_interval_s(os.environ)
        self._watchdog_due = 0.0
        self._ready_sent = False

    # -- the loop ----------------------------------------------------------------------

    def run(self) -> int:
        self._install_handlers()
        for slot in self.slots.values():
            self._spawn(slot)
        log.info(
            "service.started",
            accounts=list(self.slots),
            config_hash=self.config.config_hash,
            version=__version__,
            state_dir=str(self.state_dir),
        )
        while not self._all_done():
            self._step(timeout=self._next_timeout())
        log.info("service.stopped", reason="signal" if self.stopping else "all workers finished")
        return EX_OK

    def _step(self, timeout: float) -> None:
        waitables: list[Any] = [self._wake_r]
        for slot in self._live():
            waitables += [slot.process.sentinel, slot.conn]  # type: ignore[union-attr]
        wait(waitables, timeout)
        self._drain_wakeups()
        self._dispatch_signals()
        for slot in self._live():
            self._read_messages(slot)
            self._reap_if_dead(slot)
        self._respawn_due()
        self._notify_systemd()

    def _notify_systemd(self) -> None:
        """READY once every worker has started; WATCHDOG only from this loop, so a hung
        supervisor stops pinging; STATUS says how the accounts stand."""
        if not self._ready_sent and all(s.started or s.done for s in self.slots.values()):
            self._ready_sent = True
            self.notifier.ready()
        now = time.monotonic()
        if self._watchdog_s is not None and now >= self._watchdog_due:
            self._watchdog_due = now + self._watchdog_s
            self.notifier.watchdog()
            up = sum(1 for s in self.slots.values() if s.process is not None)
            seqs = ", ".join(f"{s.account}@{s.last_seq}" for s in self.slots.values())
            self.notifier.status(f"{up}/{len(self.slots)} workers up; last updates {seqs}")

    # -- signals -----------------------------------------------------------------------

    def _install_handlers(self) -> None:
        def record(signum: int, frame: FrameType | None) -> None:
            self.signals.put(signum)  # only record; the loop acts
            self._wake_w.send(b"\0")

        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, record)

    def _dispatch_signals(self) -> None:
        while not self.signals.empty():
            signum = self.signals.get()
            if signum in (signal.SIGTERM, signal.SIGINT):
                self.handle_term(signum)
            elif signum == signal.SIGHUP:
                self.handle_hup()

    def handle_term(self, signum: int) -> None:
        if self.stopping:
            log.warning(
                "service.stopping",
                signal=signal.Signals(signum).name,
                reason="second signal: forcing workers down",
            )
            self._kill_all()
            return
        self.stopping = True
        self.notifier.stopping()
        log.info(
            "service.stopping",
            signal=signal.Signals(signum).name,
            reason="graceful: workers finish the update in hand",
        )
        for slot in self.slots.values():
            slot.restart_at = None
            if slot.process is not None and slot.process.is_alive():
                os.kill(slot.process.pid, signal.SIGTERM)  # type: ignore[arg-type]
        self._deadline = time.monotonic() + self.config.settings.supervision.shutdown_budget_s

    def handle_hup(self) -> None:
        # Live reload of the instruments file is its own piece of work; until it lands,
        # SIGHUP must not kill the daemon (its default action), and says what to do.
        log.warning("config.reload_unavailable",
                    reason="live reload is not implemented yet; restart the service to apply")

    # -- workers -----------------------------------------------------------------------

    def _spawn(self, slot: WorkerSlot) -> None:
        parent, child = SPAWN.Pipe(duplex=True)
        spec = WorkerSpec(slot.account, self.config, self.state_dir, slot.stop_at_seq)
        process = SPAWN.Process(
            target=worker_main,
            args=(spec, child),
            name=f"regime-trader:{slot.account}",
            daemon=False,
        )
        with _without_notify_socket():
            process.start()
        child.close()
        slot.process, slot.conn, slot.restart_at = process, parent, None

    def _read_messages(self, slot: WorkerSlot) -> None:
        assert slot.conn is not None
        try:
            while slot.conn.poll():
                kind, value = slot.conn.recv()
                if kind in ("started", "updated"):
                    slot.started, slot.last_seq = True, int(value)
        except (EOFError, OSError):
            pass  # the worker is gone; its sentinel tells us how it ended

    def _reap_if_dead(self, slot: WorkerSlot) -> None:
        process = slot.process
        assert process is not None
        if process.is_alive():
            return
        process.join()
        code = process.exitcode
        assert slot.conn is not None
        slot.conn.close()
        slot.process, slot.conn = None, None
        if code == 0 or self.stopping:
            slot.done = True
            log.info("worker.exited", account=slot.account, exit_code=code, restarts=slot.restarts)
            return
        self._schedule_restart(slot, code)

    def _schedule_restart(self, slot: WorkerSlot, code: int | None) -> None:
        backoff = self.config.settings.supervision.restart_backoff_s
        fields = (
            {"signal": signal.Signals(-code).name}
            if code is not None and code < 0
            else {"exit_code": code}
        )
        log.warning(
            "worker.exited",
            account=slot.account,
            restarts=slot.restarts,
            backoff_s=backoff,
            **fields,
        )
        slot.restart_at = time.monotonic() + backoff

    def _respawn_due(self) -> None:
        now = time.monotonic()
        for slot in self.slots.values():
            if slot.restart_at is not None and slot.restart_at <= now and not self.stopping:
                slot.restarts += 1
                self._spawn(slot)
                log.info(
                    "worker.restarted",
                    account=slot.account,
                    restarts=slot.restarts,
                    pid_worker=slot.process.pid if slot.process else None,
                )

    def _kill_all(self) -> None:
        for slot in self._live():
            slot.process.kill()  # type: ignore[union-attr]

    # -- helpers -----------------------------------------------------------------------

    def _live(self) -> list[WorkerSlot]:
        return [s for s in self.slots.values() if s.process is not None]

    def _all_done(self) -> bool:
        return all(s.done or (self.stopping and s.process is None) for s in self.slots.values())

    def _next_timeout(self) -> float:
        if self.stopping:
            remaining = self._deadline - time.monotonic()
            if remaining <= 0:
                log.warning("service.stopping", reason="shutdown budget spent: killing workers")
                self._kill_all()
                return 1.0
            return remaining
        now = time.monotonic()
        due = [s.restart_at - now for s in self.slots.values() if s.restart_at]
        if self._watchdog_s is not None:
            due.append(self._watchdog_due - now)
        return max(0.0, min(due, default=1.0))

    def _drain_wakeups(self) -> None:
        self._wake_r.setblocking(False)
        try:
            while self._wake_r.recv(64):
                pass
        except BlockingIOError:
            pass  # nothing (more) to drain


def _stop_at(state_dir: Path, account: str, stop_after: int | None) -> int | None:
    """--stop-after N counts from where the account's state stands at start-up."""
    if stop_after is None:
        return None
    return last_seq(state_path(state_dir, account)) + stop_after


class _without_notify_socket:  # noqa: N801 - used as a context manager, named like one
    """Workers must not talk to systemd: only the main process may (NotifyAccess=main)."""

    def __enter__(self) -> None:
        self._saved = dict(os.environ)
        forget_notify_env(os.environ)

    def __exit__(self, *exc: object) -> None:
        os.environ.update(self._saved)
