"""From log events to alert messages. Pure: events in, messages out; no clock, no I/O.

- `account.parked` after a worker refused to start (exit 78): `parked`, with the last
  error the account's worker logged (why it refused); folded into `keys_refused` when
  that was the cause, so one problem is one message.
- `account.parked` with reason "restart budget exhausted": `restart_budget` (scope
  account: parked for the cool-down, then restarted).
- `service.stopping` with reason "global restart budget exhausted": `restart_budget`
  (scope global: the service exits 70 for the init system to restart it).
- `broker.auth_failed`: `keys_refused`.
- `model.unconverged` in N updates in a row (`update.completed` closes each update; one
  without `model.unconverged` breaks the streak): `unconverged`, once per streak.

`DailySchedule` says when the daily P&L is due, from the time it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, time, timedelta
from typing import Any

from service.alerts.message import Alert

Event = dict[str, Any]
GLOBAL_BUDGET = "global restart budget exhausted"
ACCOUNT_BUDGET = "restart budget exhausted"
MAX_REASON = 240  # characters of a reason in a summary line; details keep it whole
_NOT_A_CAUSE = {"account.parked", "worker.exited"}  # the supervisor's, not the worker's why


class AlertRules:
    def __init__(self, unconverged_streak: int) -> None:
        self.unconverged_streak = unconverged_streak
        self._streaks: dict[str, int] = {}
        self._unconverged: dict[str, list[str]] = {}  # this update's symbols, per account
        self._refused: set[str] = set()  # keys refused: its parking is already said
        self._last_error: dict[str, dict[str, Any]] = {}
        self._handlers: dict[str, Callable[[Event, str], list[Alert]]] = {
            "account.parked": self._parked,
            "broker.auth_failed": self._keys_refused,
            "model.unconverged": self._note_unconverged,
            "update.completed": self._update_completed,
            "update.failed": self._update_failed,
            "worker.started": self._worker_started,
        }

    def on_event(self, event: Event) -> list[Alert]:
        name, account = str(event.get("event", "")), event.get("account")
        if name.startswith("alert."):
            return []  # our own delivery's lines (from the sender's thread): never a cause
        if name == "service.stopping" and event.get("reason") == GLOBAL_BUDGET:
            return [self._global_budget(event)]
        if not isinstance(account, str):
            return []
        if event.get("level") in ("error", "critical") and name not in _NOT_A_CAUSE:
            self._last_error[account] = _cause(event)
        handler = self._handlers.get(name)
        return handler(event, account) if handler else []

    # -- the worker is gone -------------------------------------------------------------

    def _parked(self, event: Event, account: str) -> list[Alert]:
        if event.get("reason") == ACCOUNT_BUDGET:
            return [self._account_budget(event, account)]
        if account in self._refused:
            self._refused.discard(account)
            return []  # keys_refused said it, and that the account is parked
        cause = self._last_error.get(account)
        said = f"{cause['event']}: {cause.get('reason', '')}" if cause else "exit 78"
        summary = (f"{account} is parked until a person acts: its worker refused to start "
                   f"({_short(said)})")
        return [Alert("parked", account, _at(event), summary,
                      {"reason": event.get("reason"), "exit_code": event.get("exit_code"),
                       "cause": cause})]

    def _account_budget(self, event: Event, account: str) -> Alert:
        cooldown = event.get("backoff_s")
        summary = (f"{account}: restart budget exhausted after {event.get('restarts')} "
                   f"restarts; parked for {cooldown} s, then started again")
        return Alert("restart_budget", account, _at(event), summary,
                     {"scope": "account", "restarts": event.get("restarts"),
                      "parked_for_s": cooldown, "exit_code": event.get("exit_code"),
                      "signal": event.get("signal"), "cause": self._last_error.get(account)})

    def _global_budget(self, event: Event) -> Alert:
        account = event.get("account")
        summary = (f"the service is stopping (exit {event.get('exit_code')}): the global "
                   f"restart budget is exhausted (last failure: {account}); the init system "
                   "restarts it")
        return Alert("restart_budget", account if isinstance(account, str) else None,
                     _at(event), summary,
                     {"scope": "global", "exit_code": event.get("exit_code")})

    def _keys_refused(self, event: Event, account: str) -> list[Alert]:
        self._refused.add(account)
        summary = (f"{account}: the broker refused the keys; the account is parked until "
                   "they are set and the service restarted")
        return [Alert("keys_refused", account, _at(event), summary,
                      {"reason": event.get("reason"), "next": event.get("next")})]

    def _worker_started(self, event: Event, account: str) -> list[Alert]:
        self._last_error.pop(account, None)  # a cause is of this worker's life, not older
        return []

    # -- estimates that stay unconverged ------------------------------------------------

    def _note_unconverged(self, event: Event, account: str) -> list[Alert]:
        rows = event.get("instruments") or []
        self._unconverged[account] = [str(r.get("symbol")) for r in rows if isinstance(r, dict)]
        return []

    def _update_failed(self, event: Event, account: str) -> list[Alert]:
        self._unconverged.pop(account, None)  # that update never completed: not counted
        return []

    def _update_completed(self, event: Event, account: str) -> list[Alert]:
        symbols = self._unconverged.pop(account, None)
        streak = self._streaks[account] = self._streaks.get(account, 0) + 1 if symbols else 0
        if streak != self.unconverged_streak or not symbols:
            return []  # once per streak: at the update that reaches the threshold
        summary = (f"{account}: estimates unconverged in {streak} updates in a row "
                   f"(now {', '.join(symbols)}); their targets are being reduced")
        return [Alert("unconverged", account, _at(event), summary,
                      {"streak": streak, "symbols": symbols, "seq": event.get("seq"),
                       "bar_time": event.get("bar_time")})]


class DailySchedule:
    """Due once a day at `daily_at` (HH:MM, UTC), from the first such time after `start`;
    days missed while the daemon was down are not made up."""

    def __init__(self, daily_at: str, start: datetime) -> None:
        hh, mm = daily_at.split(":")
        self.at = time(int(hh), int(mm), tzinfo=UTC)
        self.next = self._after(start)

    def due(self, now: datetime) -> bool:
        if now < self.next:
            return False
        self.next = self._after(now)
        return True

    def _after(self, moment: datetime) -> datetime:
        today = datetime.combine(moment.astimezone(UTC).date(), self.at)
        return today if today > moment else today + timedelta(days=1)


def _cause(event: Event) -> dict[str, Any]:
    reason = event.get("reason", event.get("error"))
    return {"event": event.get("event"), **({"reason": str(reason)} if reason else {})}


def _short(text: str) -> str:
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


def _at(event: Event) -> str:
    return str(event.get("timestamp") or "")
