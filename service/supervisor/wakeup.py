"""When the supervisor's loop must wake next: the soonest of a watchdog ping, a restart,
a hung worker's next signal, a worker's heartbeat deadline and the shutdown budget; at
least once a second (the runtime status's heartbeat)."""

from __future__ import annotations

from collections.abc import Iterable

from service.supervisor.systemd_report import SystemdReport
from service.supervisor.worker_handle import WorkerHandle


def next_wakeup(
    now: float, workers: Iterable[WorkerHandle], systemd: SystemdReport,
    stop_deadline: float | None,
) -> float:
    """Seconds from `now` (monotonic) until the loop must act, never negative."""
    due = [systemd.next_watchdog - now, 1.0]
    for worker in workers:
        times = (worker.restart_at, worker.escalation.next_at(),
                 worker.deadline if worker.alive else None)
        due += [t - now for t in times if t is not None]
    if stop_deadline is not None:
        due.append(stop_deadline - now)
    return max(0.0, min(due))
