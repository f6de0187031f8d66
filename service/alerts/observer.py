"""Alerts as an observer of the supervisor's events: the rules decide, the sender posts.

`on_event` runs wherever an event is logged (the supervisor's loop, mostly) and only
queues; `tick` (from the loop) queues the daily P&L when it is due, as a job the sender's
thread builds, so reading the databases never holds up supervision either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

from service.alerts.message import Alert
from service.alerts.pnl import daily_pnl
from service.alerts.rules import AlertRules, DailySchedule
from service.alerts.webhook import WebhookSender
from service.settings_ops import AlertSettings
from service.state.history import EquityPoint, read_equity_history
from service.state.paths import state_path

log = structlog.get_logger("service.supervisor")
Now = Callable[[], datetime]


def wall_now() -> datetime:
    return datetime.now(UTC)


class AlertObserver:
    def __init__(
        self,
        settings: AlertSettings,
        state_dir: Path,
        accounts: Callable[[], Iterable[str]],
        sender: WebhookSender,
        now: Now = wall_now,
    ) -> None:
        self.settings = settings
        self.state_dir = state_dir
        self.accounts = accounts  # those the daily P&L covers: the supervisor's, now
        self.sender = sender
        self.now = now
        self.rules = AlertRules(settings.unconverged_streak)
        self.schedule = DailySchedule(settings.daily_at, now())

    @classmethod
    def from_settings(
        cls, settings: AlertSettings, state_dir: Path, accounts: Callable[[], Iterable[str]]
    ) -> AlertObserver | None:
        """None when no webhook is configured: no rules run, no thread starts."""
        if settings.webhook is None:
            return None
        return cls(settings, state_dir, accounts, WebhookSender(settings.webhook,
                                                                settings.timeout_s))

    def start(self) -> None:
        self.sender.start()

    def stop(self) -> None:
        """At the supervisor's exit: what is queued (a parking that stops the service, the
        global budget) still goes out, within one timeout and a bit."""
        self.sender.stop(flush_s=self.settings.timeout_s + 1.0)

    def on_event(self, event: dict[str, Any]) -> None:
        for alert in self.rules.on_event(event):
            self.sender.submit(alert)

    def tick(self) -> None:
        at = self.now()
        if self.schedule.due(at):
            self.sender.submit(lambda: self.daily(at))

    def daily(self, at: datetime) -> Alert:
        """The daily P&L; built on the sender's thread (it reads every account's history)."""
        return daily_pnl({a: self._history(a) for a in self.accounts()}, at)

    def _history(self, account: str) -> list[EquityPoint]:
        database = state_path(self.state_dir, account)
        if not database.exists():
            return []
        try:
            return read_equity_history(database)
        except Exception as error:  # sqlite3's errors are the state package's to import;
            # whatever it is, this account's line says "no updates" and the others go out
            log.warning("alert.history_unreadable", account=account, error=str(error))
            return []
