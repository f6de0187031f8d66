"""What an abnormal worker exit leads to (service/supervisor/restarts.py), decided on real
handles and budgets: a refusal for now (75) is the account's own business; a crash loop
is everyone's."""

from __future__ import annotations

from service.exit_codes import EX_TEMPFAIL
from service.settings_ops import SupervisionSettings
from service.supervisor.budget import RestartBudget
from service.supervisor.restarts import Restarts
from service.supervisor.worker_handle import WorkerHandle

SETTINGS = SupervisionSettings(restart_intensity=2, restart_period_s=60.0,
                               global_intensity=3, global_period_s=300.0)


def handles(count: int) -> list[WorkerHandle]:
    return [
        WorkerHandle(f"acct{i}", SETTINGS,
                     RestartBudget(SETTINGS.restart_intensity, SETTINGS.restart_period_s))
        for i in range(count)
    ]


def test_refusals_for_now_park_each_account_but_never_exhaust_the_global_budget() -> None:
    """Four accounts refused at once (a twin host, a full disk): each is restarted, then
    parked for its cool-down; the supervisor does not give up on the others."""
    restarts = Restarts(SETTINGS)
    workers = handles(4)
    verdicts = [[restarts.after_exit(w, EX_TEMPFAIL, now=float(n), fields={}) for n in range(3)]
                for w in workers]
    assert verdicts == [["restart", "restart", "parked"]] * 4
    assert all(w.parked for w in workers)


def test_crashes_across_accounts_exhaust_the_global_budget() -> None:
    restarts = Restarts(SETTINGS)
    verdicts = [restarts.after_exit(w, 1, now=1.0, fields={}) for w in handles(4)]
    assert verdicts == ["restart", "restart", "restart", "give_up"]
