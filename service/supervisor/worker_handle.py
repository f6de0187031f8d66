"""One account's worker process as the supervisor sees it: spawn, messages, liveness,
and the escalation that replaces a hung one (SIGUSR1 for its stacks, SIGTERM, SIGKILL)."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

import structlog

from service.settings_ops import SupervisionSettings
from service.supervisor.budget import RestartBudget
from service.supervisor.output_relay import LineReader, StderrTail, write_line
from service.worker.entry import WorkerSpec, worker_main

log = structlog.get_logger("service.supervisor")
SPAWN = multiprocessing.get_context("spawn")
SIGTERM_AFTER_DUMP_S = 0.5  # time for faulthandler's dump to reach the pipe


@dataclass
class Escalation:
    """Signals still to send to a hung worker, each at its monotonic time."""

    steps: list[tuple[float, signal.Signals]] = field(default_factory=list)

    def due(self, now: float) -> list[signal.Signals]:
        ready = [sig for at, sig in self.steps if at <= now]
        self.steps = [(at, sig) for at, sig in self.steps if at > now]
        return ready

    def next_at(self) -> float | None:
        return min((at for at, _ in self.steps), default=None)


class WorkerHandle:
    def __init__(self, account: str, settings: SupervisionSettings, budget: RestartBudget) -> None:
        self.account = account
        self.settings = settings
        self.budget = budget
        self.process: BaseProcess | None = None
        self.conn: Connection | None = None
        self.readers: list[LineReader] = []
        self.deadline = 0.0  # monotonic time by which the next message must come
        self.last_heard = 0.0  # monotonic time of its last message (or its spawn)
        self.stderr_tail = StderrTail()
        self.escalation = Escalation()
        self.restarts = 0
        self.restart_at: float | None = None
        self.parked = False
        self.done = False
        self.started = False
        # Set when this supervisor began stopping it as hung: whatever its exit code, even a
        # clean 0 after the SIGTERM it was sent, it is then replaced, not finished.
        self.stopped_as_hung = False
        self.retired = False  # it said it left the instruments file (then exits 0)
        self.last_seq = 0
        self.stop_at_seq: int | None = None
        self.on_event: Callable[[dict[str, Any]], None] = lambda event: None

    # -- life cycle --------------------------------------------------------------------

    def spawn(self, spec: WorkerSpec) -> None:
        parent, child = SPAWN.Pipe(duplex=True)
        out_r, out_w = SPAWN.Pipe(duplex=False)
        err_r, err_w = SPAWN.Pipe(duplex=False)
        process = SPAWN.Process(
            target=worker_main,
            args=(spec, child, out_w, err_w),
            name=f"regime-trader:{self.account}",
        )
        process.start()
        for end in (child, out_w, err_w):
            end.close()
        self.readers = [
            LineReader(os.dup(out_r.fileno()), write_line),
            LineReader(os.dup(err_r.fileno()), self._stderr_line),
        ]
        out_r.close()
        err_r.close()
        self.process, self.conn, self.restart_at = process, parent, None
        self.started, self.escalation = False, Escalation()
        self.done = self.retired = self.stopped_as_hung = False
        self.stderr_tail.clear()
        self.last_heard = time.monotonic()
        self.deadline = self.last_heard + self.settings.startup_budget_s

    @property
    def alive(self) -> bool:
        return self.process is not None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def waitables(self) -> list[Any]:
        if self.process is None or self.conn is None:
            return []
        return [self.process.sentinel, self.conn, *(r for r in self.readers if not r.closed)]

    def send(self, message: tuple[Any, ...]) -> None:
        """A control message to the worker (it acts on it between updates)."""
        if self.conn is not None:
            # OSError: it is exiting; a restarted worker starts from the current config.
            with contextlib.suppress(OSError):
                self.conn.send(message)

    def signal(self, signum: signal.Signals) -> None:
        if self.process is not None and self.process.pid is not None and self.process.is_alive():
            os.kill(self.process.pid, signum)

    # -- what the worker says ----------------------------------------------------------

    def pump(self) -> None:
        for reader in self.readers:
            reader.pump()
        if self.conn is None:
            return
        try:
            while self.conn.poll():
                self._on_message(self.conn.recv())
        except (EOFError, OSError):
            pass  # the worker is gone; its sentinel tells how it ended

    def _on_message(self, message: tuple[Any, ...]) -> None:
        if message[0] == "event":  # a log event: for the observers, not a sign of life
            self.on_event(message[1])
            return
        kind, seq, allowance_s = message
        self.last_seq = int(seq)
        self.started = self.started or kind == "started"
        self.retired = self.retired or kind == "retired"
        self.last_heard = time.monotonic()
        self.deadline = self.last_heard + float(allowance_s) + self._slack()

    def _stderr_line(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace").rstrip()
        if text:
            self.stderr_tail.add(text)
            log.warning("worker.stderr", account=self.account, line=text)

    # -- liveness ----------------------------------------------------------------------

    def check_hung(self, now: float) -> None:
        """Past its deadline with no message: dump its stacks, then stop it."""
        if self.process is None or self.escalation.steps or now <= self.deadline:
            return
        log.error(
            "worker.hung",
            account=self.account,
            pid=self.pid,
            silent_s=round(now - self.last_heard, 3),  # since its last message
        )
        self.stopped_as_hung = True
        term_at = now + SIGTERM_AFTER_DUMP_S
        self.escalation.steps = [
            (now, signal.SIGUSR1),
            (term_at, signal.SIGTERM),
            (term_at + self.settings.shutdown_budget_s, signal.SIGKILL),
        ]
        self.deadline = float("inf")

    def escalate(self, now: float) -> None:
        for signum in self.escalation.due(now):
            self.signal(signum)

    def _slack(self) -> float:
        return self.settings.missed_heartbeats * self.settings.heartbeat_s

    # -- exit --------------------------------------------------------------------------

    def reap(self) -> int | None:
        """If the process has ended: drain its output, close everything, return its exit
        code (negative: killed by that signal). None while it runs."""
        if self.process is None or self.process.is_alive():
            return None
        self.process.join()
        code = self.process.exitcode
        self.pump()
        for reader in self.readers:
            reader.close()
        if self.conn is not None:
            self.conn.close()
        self.process, self.conn, self.readers = None, None, []
        self.escalation = Escalation()
        return code
