"""What the supervisor's loop tells systemd: READY once every worker has started (until
then, more start-up time), WATCHDOG pings, and a one-line STATUS of the workers.

Only the loop calls `tick`, so a hung supervisor stops pinging and systemd restarts it.
"""

from __future__ import annotations

from collections.abc import Collection

from service.supervisor.sd_notify import Notifier
from service.supervisor.worker_handle import WorkerHandle

EXTEND_START_USEC = 60_000_000  # asked of systemd while workers are still starting


class SystemdReport:
    def __init__(self, notifier: Notifier, watchdog_s: float | None) -> None:
        self.notifier = notifier
        self.watchdog_s = watchdog_s
        self.next_watchdog = 0.0  # monotonic time of the next ping and STATUS line
        self.ready_sent = False

    def tick(self, now: float, workers: Collection[WorkerHandle]) -> None:
        """READY once every worker has started (until then, more start-up time);
        WATCHDOG only from this loop, so a hung supervisor stops pinging; STATUS."""
        if not self.ready_sent:
            if all(w.started or w.done or w.parked for w in workers):
                self.ready_sent = True
                self.notifier.ready()
            elif now >= self.next_watchdog:
                self.notifier.extend_timeout(EXTEND_START_USEC)
        if now >= self.next_watchdog:
            self.next_watchdog = now + (self.watchdog_s or 10.0)
            if self.watchdog_s:
                self.notifier.watchdog()
            self.notifier.status(status_line(workers))


def status_line(workers: Collection[WorkerHandle]) -> str:
    up = sum(1 for w in workers if w.alive)
    parked = [w.account for w in workers if w.parked]
    retired = [w.account for w in workers if w.retired and not w.alive]
    seqs = ", ".join(f"{w.account}@{w.last_seq}" for w in workers)
    tail = f"; parked: {', '.join(parked)}" if parked else ""
    tail += f"; retired: {', '.join(retired)}" if retired else ""
    return f"{up}/{len(workers)} workers up; last updates {seqs}{tail}"
