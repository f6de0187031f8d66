"""`/healthz`: is every account that should be trading updating on time?

The rule (docs/http.md says it for operators):

- An account that is parked, retired or paused is not checked (it is listed, with why).
- While the service stops, it is unhealthy ("the service is stopping").
- A worker that is hung, dead and waiting for its restart, or stopped is unhealthy.
- A worker still starting (before its `worker.started`) is healthy: the supervisor's own
  start-up deadline (`startup_budget_s`) replaces one that overruns it.
- A running worker must have committed an update within two intervals plus the heartbeat
  slack: `2 x interval + heartbeat_s x missed_heartbeats`, where the interval is the time
  expected between updates: `pace_s` (clock `paced`), the bar interval (clock `wall`), or
  nothing (clock `fast`), and never less than the last update's own duration (a slow
  update is the interval when updates run back to back).
- Before a worker's first update (none since its `worker.started`), its start-up budget is
  added: the first update of a cold start samples from scratch.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from service.http.timestamps import parse_utc, seconds_between
from service.settings import ServiceSettings

NOT_CHECKED = {"parked": "parked: it waits for its cool-down or a person",
               "retired": "retired: its account left the instruments file"}  # fmt: skip
DOWN = {"hung": "its worker stopped answering (hung); the supervisor is replacing it",
        "restarting": "its worker died and waits for its restart",
        "stopped": "its worker is not running"}  # fmt: skip


@dataclass(frozen=True)
class HealthRule:
    clock: str
    base_interval_s: float  # pace_s, the bar interval, or 0 (fast)
    slack_s: float  # heartbeat_s x missed_heartbeats: the supervisor's own tolerance
    startup_budget_s: float

    @classmethod
    def of(cls, settings: ServiceSettings) -> HealthRule:
        clock = settings.clock.mode
        base = {"paced": settings.clock.pace_s, "fast": 0.0,
                "wall": settings.market.bar_interval.total_seconds()}[clock]  # fmt: skip
        sup = settings.supervision
        return cls(clock, base, sup.heartbeat_s * sup.missed_heartbeats, sup.startup_budget_s)

    def interval_s(self, last_duration_s: float) -> float:
        return max(self.base_interval_s, last_duration_s)

    def allowed_s(self, last_duration_s: float) -> float:
        return 2.0 * self.interval_s(last_duration_s) + self.slack_s


class WorkerStarts:
    """An observer: when each account's current worker said `worker.started`."""

    def __init__(self) -> None:
        self.at: dict[str, datetime] = {}

    def on_event(self, event: dict[str, Any]) -> None:
        at = parse_utc(event.get("timestamp"))
        account = event.get("account")
        if event.get("event") == "worker.started" and isinstance(account, str) and at:
            self.at[account] = at


@dataclass(frozen=True)
class Health:
    ok: bool
    body: dict[str, Any]

    @property
    def status(self) -> int:
        return 200 if self.ok else 503


def evaluate(
    rule: HealthRule, document: dict[str, Any], starts: WorkerStarts, now: datetime
) -> Health:
    """The verdict on the supervisor's runtime document (RuntimeStatus.document)."""
    since = parse_utc(document.get("started_at")) or now
    accounts = {
        name: check_account(rule, info, starts.at.get(name, since), now)
        for name, info in (document.get("accounts") or {}).items()
    }
    failing = {n: a["reason"] for n, a in accounts.items() if a["checked"] and not a["ok"]}
    if document.get("stopping"):
        failing = {"service": "the service is stopping", **failing}
    body = {
        "status": "unhealthy" if failing else "ok",
        "checked_at": now.isoformat(),
        "reason": "; ".join(f"{n}: {why}" for n, why in failing.items()) or None,
        "failing": failing,
        "accounts": accounts,
        "rule": rule_json(rule),
    }
    return Health(not failing, body)


def check_account(
    rule: HealthRule, info: dict[str, Any], worker_started: datetime, now: datetime
) -> dict[str, Any]:
    state = str(info.get("state"))
    base = {"state": state, "paused": bool(info.get("paused")), "checked": True, "ok": True,
            "reason": None, "age_s": None, "allowed_s": None}  # fmt: skip
    if info.get("paused") or state in NOT_CHECKED:
        why = "paused by the operator" if info.get("paused") else NOT_CHECKED[state]
        return {**base, "checked": False, "reason": why}
    if state in DOWN:
        return {**base, "ok": False, "reason": DOWN[state]}
    if state == "starting":
        return {**base, "reason": "starting: within the supervisor's start-up deadline"}
    return {**base, **_timeliness(rule, info.get("last_update") or {}, worker_started, now)}


def _timeliness(
    rule: HealthRule, last: dict[str, Any], worker_started: datetime, now: datetime
) -> dict[str, Any]:
    duration_s = _seconds(last.get("duration_ms"))
    allowed = rule.allowed_s(duration_s)
    at = parse_utc(last.get("at"))
    if at is not None and at >= worker_started:
        age, what = seconds_between(at, now), "no update for"
    else:  # none yet from this worker: its first may be a cold start
        age, what = seconds_between(worker_started, now), "no first update since its start"
        allowed += rule.startup_budget_s
    ok = age <= allowed
    reason = None if ok else (
        f"{what} {age:.1f} s; allowed {allowed:.1f} s (2 x {rule.interval_s(duration_s):.2f} s "
        f"interval + {rule.slack_s:.2f} s heartbeat slack"
        + (f" + {rule.startup_budget_s:g} s start-up budget)" if what != "no update for" else ")")
    )  # fmt: skip
    return {"ok": ok, "reason": reason, "age_s": round(age, 3), "allowed_s": round(allowed, 3)}


def rule_json(rule: HealthRule) -> dict[str, Any]:
    return {"clock": rule.clock, "interval_s": rule.base_interval_s, "slack_s": rule.slack_s,
            "startup_budget_s": rule.startup_budget_s,
            "allowed": "2 x max(interval_s, last update's duration) + slack_s"}  # fmt: skip


def _seconds(ms: Any) -> float:
    return float(ms) / 1e3 if isinstance(ms, int | float) else 0.0
