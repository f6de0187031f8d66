"""What the supervisor says about itself: worker states from its handles, last update and
last error from the events it sees, written where `status` reads it; and a log event
reaching the observers through the tap, a failing observer not stopping the others."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import structlog

from service.event_tap import listen, unlisten
from service.logs import configure_logging
from service.settings_ops import SupervisionSettings
from service.state.runtime_file import read_runtime
from service.supervisor.budget import RestartBudget
from service.supervisor.observers import EventHub
from service.supervisor.runtime_status import RuntimeStatus, worker_state
from service.supervisor.worker_handle import WorkerHandle


def _handle(account: str) -> WorkerHandle:
    return WorkerHandle(account, SupervisionSettings(), RestartBudget(5, 60.0))


def test_a_worker_state_follows_its_handle() -> None:
    worker = _handle("alpha")
    assert worker_state(worker) == "stopped"
    worker.restart_at = 12.0
    assert worker_state(worker) == "restarting"
    worker.parked = True
    assert worker_state(worker) == "parked"
    worker.parked, worker.restart_at, worker.retired = False, None, True
    assert worker_state(worker) == "retired"


def test_events_fill_the_runtime_document_and_the_file(tmp_path: Path) -> None:
    runtime = RuntimeStatus(tmp_path, "cafe")
    runtime.on_event({"event": "update.completed", "account": "alpha", "level": "info",
                      "timestamp": "2026-12-01T15:00:00Z", "seq": 7, "duration_ms": 12.5,
                      "bar_time": "2026-01-05T15:00:00+00:00", "orders": 2})
    runtime.on_event({"event": "account.parked", "account": "beta", "level": "error",
                      "timestamp": "2026-12-01T15:00:01Z", "reason": "restart budget exhausted"})
    beta = _handle("beta")
    beta.parked = True
    runtime.tick(0.0, [_handle("alpha"), beta])
    document = read_runtime(tmp_path)
    assert document is not None and document["config_hash"] == "cafe"
    alpha, parked = document["accounts"]["alpha"], document["accounts"]["beta"]
    assert alpha["updates"] == 1 and alpha["last_update"]["seq"] == 7
    assert alpha["last_update"]["at"] == "2026-12-01T15:00:00Z" and alpha["last_error"] is None
    assert parked["state"] == "parked" and parked["reason"] == "restart budget exhausted"
    assert parked["last_error"]["event"] == "account.parked"


def test_a_logged_event_reaches_every_observer_even_past_a_failing_one(capsys) -> None:
    seen: list[dict[str, Any]] = []

    class Broken:
        def on_event(self, event: dict[str, Any]) -> None:
            raise RuntimeError("observer bug")

    class Recorder:
        def on_event(self, event: dict[str, Any]) -> None:
            seen.append(event)

    hub = EventHub([Broken(), Recorder()])
    configure_logging("info", "json", account="alpha")
    listen(hub.publish)
    try:
        structlog.get_logger("test").info("update.completed", seq=3)
    finally:
        unlisten(hub.publish)
    assert [(e["event"], e["seq"], e["account"], e["level"]) for e in seen] == [
        ("update.completed", 3, "alpha", "info")]
    assert "observer Broken failed on update.completed" in capsys.readouterr().err
