"""The alert rules, the daily schedule and the P&L message: pure, events and times in."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from service.alerts.pnl import daily_pnl
from service.alerts.rules import AlertRules, DailySchedule
from service.state.history import EquityPoint

AT = "2026-12-01T15:00:00.000000Z"


def ev(name: str, account: str | None = "alpha", level: str = "info",
       **fields: Any) -> dict[str, Any]:
    event = {"event": name, "level": level, "timestamp": AT, "pid": 1, **fields}
    return event if account is None else {**event, "account": account}


def unconverged(account: str = "alpha", symbols: tuple[str, ...] = ("SPY",)) -> dict[str, Any]:
    return ev("model.unconverged", account, "warning",
              instruments=[{"symbol": s, "rhat_decision": 1.2} for s in symbols])


def test_a_refusal_to_start_is_parked_with_the_worker_s_reason() -> None:
    rules = AlertRules(unconverged_streak=3)
    assert rules.on_event(ev("state.unusable", level="error", reason="not a database")) == []
    [alert] = rules.on_event(ev("account.parked", level="error", exit_code=78,
                                reason="the worker refused to start with 78 ..."))
    assert alert.kind == "parked" and alert.account == "alpha" and alert.at == AT
    assert "state.unusable: not a database" in alert.summary
    assert alert.details["cause"] == {"event": "state.unusable", "reason": "not a database"}
    document = alert.document()
    assert set(document) == {"kind", "account", "at", "summary", "details", "text"}
    assert document["text"] == f"regime-trader: {alert.summary}"
    json.dumps(document)  # what the webhook receives


def test_refused_keys_are_one_message_not_two() -> None:
    rules = AlertRules(unconverged_streak=3)
    [alert] = rules.on_event(ev("broker.auth_failed", level="error", reason="401 unauthorized",
                                parked=True, next="set the keys"))
    assert alert.kind == "keys_refused" and alert.details["reason"] == "401 unauthorized"
    assert rules.on_event(ev("account.parked", level="error", exit_code=78, reason="...")) == []
    assert [a.kind for a in rules.on_event(ev("account.parked", account="beta", level="error",
                                              exit_code=78, reason="..."))] == ["parked"]


def test_restart_budgets_of_an_account_and_of_the_service() -> None:
    rules = AlertRules(unconverged_streak=3)
    [account] = rules.on_event(ev("account.parked", level="error", restarts=5,
                                  backoff_s=300.0, reason="restart budget exhausted",
                                  signal="SIGKILL"))
    assert account.kind == "restart_budget"
    assert account.details["scope"] == "account" and account.details["parked_for_s"] == 300.0
    [whole] = rules.on_event(ev("service.stopping", level="error", exit_code=70,
                                reason="global restart budget exhausted"))
    assert whole.kind == "restart_budget" and whole.details == {"scope": "global",
                                                                "exit_code": 70}
    assert rules.on_event(ev("service.stopping", account=None, reason="graceful")) == []


def test_an_unconverged_streak_alerts_once_and_rearms_after_a_break() -> None:
    rules = AlertRules(unconverged_streak=3)

    def update(bad: bool, account: str = "alpha") -> list[str]:
        out = rules.on_event(unconverged(account)) if bad else []
        out += rules.on_event(ev("update.completed", account, seq=1))
        return [a.kind for a in out]

    assert [update(True), update(True)] == [[], []]
    assert update(True, "beta") == []  # per account
    assert update(True) == ["unconverged"]
    assert update(True) == []  # the same streak: said once
    assert update(False) == []  # broken
    rules.on_event(unconverged())
    rules.on_event(ev("update.failed", level="warning"))  # never completed: not counted
    assert [update(True), update(True), update(True)] == [[], [], ["unconverged"]]


def test_the_unconverged_message_names_the_symbols_and_the_streak() -> None:
    rules = AlertRules(unconverged_streak=1)
    rules.on_event(unconverged(symbols=("SPY", "IWM")))
    [alert] = rules.on_event(ev("update.completed", seq=9, bar_time="2026-01-05T15:00:00"))
    assert alert.details["symbols"] == ["SPY", "IWM"] and alert.details["streak"] == 1
    assert alert.details["seq"] == 9 and "SPY, IWM" in alert.summary


def test_unrelated_events_and_events_of_no_account_say_nothing() -> None:
    rules = AlertRules(unconverged_streak=1)
    assert rules.on_event(ev("worker.started")) == []
    assert rules.on_event(ev("account.parked", account=None, level="error")) == []


def test_a_cause_is_the_last_error_of_the_worker_s_own_life() -> None:
    rules = AlertRules(unconverged_streak=1)
    rules.on_event(ev("worker.failed", level="error", error="boom"))
    rules.on_event(ev("worker.started"))  # a new life: the old error is no cause
    rules.on_event(ev("alert.dropped", level="error", reason="queue full"))  # ours: neither
    [alert] = rules.on_event(ev("account.parked", level="error", exit_code=78, reason="..."))
    assert alert.details["cause"] is None and "(exit 78)" in alert.summary


def test_the_daily_schedule_is_due_once_a_day_from_the_first_time_after_start() -> None:
    start = datetime(2026, 12, 1, 20, 59, tzinfo=UTC)
    schedule = DailySchedule("21:00", start)
    assert not schedule.due(start + timedelta(seconds=59))
    assert schedule.due(start + timedelta(minutes=1))
    assert not schedule.due(start + timedelta(minutes=2))
    assert schedule.due(start + timedelta(days=3, hours=1))  # days missed: one, not three
    assert not schedule.due(start + timedelta(days=3, hours=1, minutes=5))
    late = DailySchedule("21:00", datetime(2026, 12, 1, 21, 30, tzinfo=UTC))
    assert late.next == datetime(2026, 12, 2, 21, 0, tzinfo=UTC)


def point(seq: int, day: int, hour: int, equity: float) -> EquityPoint:
    return EquityPoint(seq, datetime(2026, 1, day, hour, tzinfo=UTC), equity, equity)


def test_the_daily_p_and_l_is_per_account_of_the_day_and_since_start() -> None:
    history = [point(1, 5, 15, 100_000.0), point(2, 5, 20, 100_500.0),
               point(3, 6, 15, 100_400.0), point(4, 6, 20, 101_000.0)]
    alert = daily_pnl({"alpha": history, "beta": []}, datetime(2026, 1, 6, 21, tzinfo=UTC))
    assert alert.kind == "daily_pnl" and alert.account is None
    alpha = alert.details["accounts"]["alpha"]
    assert alpha["equity"] == 101_000.0 and alpha["day"] == "2026-01-06"
    assert alpha["day_pnl"] == 500.0 and alpha["total_pnl"] == 1_000.0
    assert alert.details["accounts"]["beta"] == {"updates": 0}
    assert "alpha 101,000.00 (+500.00 on 2026-01-06, +1,000.00 since start)" in alert.summary
    assert "beta no updates yet" in alert.summary
    first_day = daily_pnl({"alpha": history[:2]}, datetime(2026, 1, 5, 21, tzinfo=UTC))
    assert first_day.details["accounts"]["alpha"]["day_pnl"] == 500.0  # since the first
