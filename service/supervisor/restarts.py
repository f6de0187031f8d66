"""What an abnormal worker exit leads to (one_for_one): a restart after an exponential
backoff; past the account's restart budget, a parked account (a cool-down while the others
trade on); past the global budget, giving up (exit 70, for systemd or daemon(8) to
restart the whole tree); a worker that refused to start (78), parked for good.

A worker that exits 75 said "not now": its state database cannot be written for the moment,
or another host trades its account (service/worker/twin_guard.py). Restarting the whole
tree would not help either, and several accounts can say it at once (a disk fills up, a
deployment is copied to a second host), so 75 is charged to the account's own budget only:
backoff, then a parked cool-down, then again; never the global budget, whose exit 70 would
stop the accounts that trade."""

from __future__ import annotations

from typing import Any, Literal

import structlog

from service.exit_codes import EX_CONFIG, EX_TEMPFAIL
from service.settings_ops import SupervisionSettings
from service.supervisor.budget import RestartBudget, backoff_s
from service.supervisor.worker_handle import WorkerHandle

log = structlog.get_logger("service.supervisor")
Verdict = Literal["restart", "parked", "parked_for_good", "give_up"]


class Restarts:
    def __init__(self, settings: SupervisionSettings) -> None:
        self.settings = settings
        self.global_budget = RestartBudget(settings.global_intensity, settings.global_period_s)

    def after_exit(
        self, worker: WorkerHandle, code: int, now: float, fields: dict[str, Any]
    ) -> Verdict:
        """Decide what follows an abnormal exit and log it (`worker.exited` with `fields`,
        which say how it ended, then `account.parked` if it comes to that)."""
        verdict = self._verdict(worker, code, now)
        timing: dict[str, float] = {}
        if verdict == "restart":
            timing["backoff_s"] = backoff_s(
                worker.budget.recent, self.settings.backoff_initial_s,
                self.settings.backoff_max_s)
            worker.restart_at = now + timing["backoff_s"]
        emit = log.warning if verdict == "restart" else log.error
        emit("worker.exited", account=worker.account, restarts=worker.restarts, **timing,
             **fields)
        how = {k: v for k, v in fields.items() if k in ("exit_code", "signal")}
        if verdict == "parked_for_good":
            self._park_for_good(worker, how)
        elif verdict == "parked":
            self._park(worker, now, how)
        return verdict

    def _verdict(self, worker: WorkerHandle, code: int, now: float) -> Verdict:
        if code == EX_CONFIG:
            return "parked_for_good"
        if code == EX_TEMPFAIL:
            return "parked" if worker.budget.record(now) else "restart"
        if self.global_budget.record(now):
            return "give_up"
        if worker.budget.record(now):
            return "parked"
        return "restart"

    def _park_for_good(self, worker: WorkerHandle, fields: dict[str, Any]) -> None:
        """The worker refused to start for a reason a restart cannot fix (exit 78: an
        unusable or foreign state database, an unusable data file, refused keys), so the
        account stays parked (the others trade on) and the service's exit
        code is 78, which systemd does not restart."""
        log.error(
            "account.parked",
            account=worker.account,
            restarts=worker.restarts,
            reason="the worker refused to start with 78, which a restart cannot fix; its "
            "last event says why (state.unusable: restore it or move it aside; "
            "market.unusable: fix the file; broker.auth_failed: set the keys), then restart "
            "the service",
            **fields,
        )
        worker.parked, worker.done, worker.restart_at = True, True, None

    def _park(self, worker: WorkerHandle, now: float, fields: dict[str, Any]) -> None:
        cooldown = self.settings.park_cooldown_s
        log.error(
            "account.parked",
            account=worker.account,
            restarts=worker.restarts,
            backoff_s=cooldown,
            reason="restart budget exhausted",
            **fields,
        )
        worker.parked, worker.restart_at = True, now + cooldown
        worker.budget.reset()
