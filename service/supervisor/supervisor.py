"""The supervisor: the main process, one worker process per account (one_for_one).

Signal handlers only record the signal (a queue and a wake-up byte); the loop dispatches
to `handle_term` and `handle_hup`. A worker that exits abnormally or hangs is replaced
after an exponential backoff; past its restart budget the account is parked for a
cool-down while the others trade on; past the global budget the supervisor exits 70 so
systemd or daemon(8) restarts the whole tree. SIGTERM/SIGINT let every worker finish its
update and checkpoint; a second one, or the shutdown budget running out, kills them.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from multiprocessing.connection import wait
from pathlib import Path

import structlog

from service import __version__
from service.config_loader import LoadedConfig
from service.event_tap import listen, unlisten
from service.exit_codes import EX_CONFIG, EX_OK, EX_SOFTWARE
from service.logs import choose_format
from service.reload.reloader import InstrumentsReloader, ReloadOutcome
from service.reload.watcher import InstrumentsWatcher
from service.supervisor.budget import RestartBudget
from service.supervisor.device_handle import SharedDevice
from service.supervisor.exit_reason import exit_fields
from service.supervisor.http_endpoint import http_endpoint
from service.supervisor.observers import EventHub
from service.supervisor.operator import OperatorChannels
from service.supervisor.reload_requests import ReloadRequests, announce
from service.supervisor.restarts import Restarts
from service.supervisor.runtime_status import RuntimeStatus
from service.supervisor.sd_notify import Notifier, watchdog_interval_s
from service.supervisor.signal_inbox import SignalInbox
from service.supervisor.systemd_report import SystemdReport
from service.supervisor.wakeup import next_wakeup
from service.supervisor.worker_handle import WorkerHandle
from service.supervisor.worker_start import start_worker, stop_at_seq
from service.worker.spec import WorkerSpec

log = structlog.get_logger("service.supervisor")
HANDLED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Supervisor:
    def __init__(
        self,
        config: LoadedConfig,
        state_dir: Path,
        stop_after: int | None,
        faults: tuple[str, ...] = (),
    ) -> None:
        self.reloader = InstrumentsReloader(config)
        self.settings = config.settings.supervision
        self.state_dir = state_dir
        self.faults = faults
        self.log_format = choose_format(config.settings.logging.format, sys.stdout)
        self.device = SharedDevice(config, self.log_format)  # off unless [model] shared_device
        self.stop_after = stop_after
        self.workers: dict[str, WorkerHandle] = {}
        self.runtime = RuntimeStatus(state_dir, config.config_hash, shard=config.settings.shard)
        self.runtime.device = self.device.state
        self.events = EventHub([self.runtime])
        self.http = http_endpoint(lambda: self.config, state_dir, self.runtime, self.workers,
                                  self.events)
        self.operator = OperatorChannels(config, state_dir, self.workers, self.runtime, self.events)
        for account in config.active_accounts:
            self._add_worker(account)
        self.restarts = Restarts(self.settings)
        self.inbox = SignalInbox()
        self.reload_requests = ReloadRequests(self.reloader)
        self.watcher = InstrumentsWatcher(
            config.instruments_path, config.settings.reload, self._record_file_change
        )
        self.notifier = Notifier.from_env(os.environ)
        self.systemd = SystemdReport(self.notifier, watchdog_interval_s(os.environ))
        self.stopping = False
        self.exit_code = EX_OK
        self._stop_deadline = float("inf")

    @property
    def config(self) -> LoadedConfig:
        """The configuration in force: the settings, and the last good instruments file."""
        return self.reloader.config

    def _add_worker(self, account: str) -> WorkerHandle:
        budget = RestartBudget(self.settings.restart_intensity, self.settings.restart_period_s)
        worker = WorkerHandle(account, self.settings, budget)
        worker.stop_at_seq = stop_at_seq(self.state_dir, account, self.stop_after)
        worker.on_event = self.events.publish
        self.workers[account] = worker
        return worker

    # -- the loop ----------------------------------------------------------------------

    def run(self) -> int:
        self.inbox.install(HANDLED_SIGNALS)
        if (refused := self.http.bind()) is not None:  # before any worker starts: 75 or 78
            return refused
        listen(self.events.publish)
        self.operator.start()
        self.device.start()
        for worker in self.workers.values():
            self._spawn(worker)
        self.http.start()
        if self.config.settings.reload.watch:
            self.watcher.start()
        log.info("service.started", accounts=list(self.workers), version=__version__,
                 config_hash=self.config.config_hash, state_dir=str(self.state_dir))
        while not self._finished():
            self._step(self._timeout())
        self.watcher.stop()
        self.http.stop()
        self.device.stop()
        log.info("service.stopped", reason=self._stop_reason(), exit_code=self.exit_code)
        self.runtime.final(self.workers.values())
        self.operator.stop()
        unlisten(self.events.publish)
        return self.exit_code

    def _step(self, timeout: float) -> None:
        waitables = (w for h in self.workers.values() for w in h.waitables())
        wait([self.inbox.waitable, *waitables], timeout)
        self.inbox.drain_wakeups()
        self._dispatch_signals()
        self._dispatch_reloads()
        now = time.monotonic()
        for worker in self.workers.values():
            worker.pump()
            worker.check_hung(now)
            worker.escalate(now)
            self._reap(worker, now)
        self._restart_due(now)
        self.device.poll(now, self.stopping)
        self._force_if_overdue(now)
        self.systemd.tick(now, self.workers.values())
        self.runtime.tick(now, self.workers.values())
        self.operator.tick(now)

    def _finished(self) -> bool:
        if self.stopping:
            return all(not w.alive for w in self.workers.values())
        return all(w.done and not self._awaits_return(w) for w in self.workers.values())

    def _awaits_return(self, worker: WorkerHandle) -> bool:
        """A retired account may come back in the instruments file: the service waits for
        it, unless this is a bounded run (--stop-after)."""
        return worker.retired and self.stop_after is None

    # -- signals -----------------------------------------------------------------------

    def _dispatch_signals(self) -> None:
        for signum in self.inbox.take_signals():
            if signum == signal.SIGHUP:
                self.handle_hup()
            else:
                self.handle_term(signum)

    def handle_term(self, signum: signal.Signals, reason: str = "graceful") -> None:
        if self.stopping:
            log.warning(
                "service.stopping", signal=signum.name, reason="second signal: killing workers"
            )
            self._signal_all(signal.SIGKILL)
            return
        self.stopping = self.runtime.stopping = True
        self.notifier.stopping()
        log.info("service.stopping", signal=signum.name, reason=reason)
        self._stop_deadline = time.monotonic() + self.settings.shutdown_budget_s
        self._signal_all(signal.SIGTERM)

    def handle_hup(self) -> None:
        self.reload("sighup")

    # -- reload: SIGHUP, the watcher and the hash check all end here -------------------

    def _record_file_change(self) -> None:
        """Called on the watcher's thread: only record, the loop acts."""
        self.reload_requests.put("watch")
        self.inbox.wake()

    def _dispatch_reloads(self) -> None:
        source = self.reload_requests.take(time.monotonic())
        if source and not self.stopping:
            self.reload(source)

    def reload(self, source: str) -> None:
        """Read, validate and apply the instruments file; a bad one changes nothing."""
        self.notifier.reloading()
        outcome = self.reloader.check()
        if announce(outcome, source, str(self.config.instruments_path)):
            self._apply(outcome, source)
        self.notifier.ready()

    def _apply(self, outcome: ReloadOutcome, source: str) -> None:
        new_accounts = [a for a in outcome.config.active_accounts if self._absent(a)]
        log.info(
            "config.applied",
            source=source,
            file=str(self.config.instruments_path),
            config_hash=outcome.config.config_hash,
            added=outcome.added,
            removed=outcome.removed,
            accounts_added=new_accounts,
        )
        for account, worker in self.workers.items():
            if worker.alive and (account in outcome.added or account in outcome.removed):
                worker.send(("config", outcome.config))
        for account in new_accounts:
            self._spawn(self.workers.get(account) or self._add_worker(account))

    def _absent(self, account: str) -> bool:
        """No worker for it: never had one, or it retired and has exited."""
        worker = self.workers.get(account)
        return worker is None or (worker.retired and not worker.alive)

    # -- workers -----------------------------------------------------------------------

    def _spawn(self, worker: WorkerHandle) -> None:
        spec = WorkerSpec(account=worker.account, config=self.config, state_dir=self.state_dir,
                          stop_at_seq=worker.stop_at_seq, log_format=self.log_format,
                          faults=self.faults, device=self.device.endpoint)  # fmt: skip
        start_worker(worker, spec)

    def _reap(self, worker: WorkerHandle, now: float) -> None:
        code = worker.reap()
        if code is None:
            return
        fields = exit_fields(code, worker.stderr_tail.lines())
        if (code == 0 and not worker.stopped_as_hung) or self.stopping:
            log.info("worker.exited", account=worker.account, restarts=worker.restarts, **fields)
            self._ended(worker)
            return
        if worker.stopped_as_hung:
            # A worker that woke up in time to honour the SIGTERM of its escalation exits 0:
            # its account is not finished, the hang is what ended it.
            fields["reason"] = f"stopped as hung ({fields['reason']})"
        verdict = self.restarts.after_exit(worker, code, now, fields)
        if verdict == "parked_for_good":
            self.exit_code = EX_CONFIG
        elif verdict == "give_up":
            self._give_up(worker)

    def _ended(self, worker: WorkerHandle) -> None:
        """A clean exit is final, unless it retired and its account is back in the file
        (re-added while it was closing out): then it starts again at once."""
        back = worker.account in self.config.active_accounts
        if worker.retired and back and not self.stopping:
            self._spawn(worker)
            log.info("worker.restarted", account=worker.account, restarts=worker.restarts,
                     worker_pid=worker.pid, reason="account back in the instruments file")
            return
        worker.done = True

    def _give_up(self, worker: WorkerHandle) -> None:
        log.error("service.stopping", reason="global restart budget exhausted",
                  account=worker.account, exit_code=EX_SOFTWARE)
        self.exit_code = EX_SOFTWARE
        self.handle_term(signal.SIGTERM, reason="global restart budget exhausted")

    def _restart_due(self, now: float) -> None:
        for worker in self.workers.values():
            if self.stopping or worker.restart_at is None or worker.restart_at > now:
                continue
            worker.restarts += 1
            worker.parked = False
            self._spawn(worker)
            log.info("worker.restarted", account=worker.account, restarts=worker.restarts,
                     worker_pid=worker.pid)  # fmt: skip

    def _signal_all(self, signum: signal.Signals) -> None:
        for worker in self.workers.values():
            worker.restart_at = None
            worker.signal(signum)

    def _force_if_overdue(self, now: float) -> None:
        if self.stopping and now >= self._stop_deadline:
            log.warning("service.stopping", reason="shutdown budget spent: killing workers")
            self._signal_all(signal.SIGKILL)
            self._stop_deadline = float("inf")

    # -- helpers -----------------------------------------------------------------------

    def _timeout(self) -> float:
        deadline = self._stop_deadline if self.stopping else None
        return next_wakeup(time.monotonic(), self.workers.values(), self.systemd, deadline)

    def _stop_reason(self) -> str:
        if self.exit_code == EX_SOFTWARE:
            return "global restart budget exhausted"
        return "signal" if self.stopping else "all workers finished"

