"""What passes between the supervisor and its operator besides the log: alerts out (a
webhook, service/alerts/) and control requests in (pause, resume, flatten: files in the
state directory, service/control/). One bundle, so the supervisor's loop has one call
for both: `tick`, next to the runtime status's.
"""

from __future__ import annotations

from pathlib import Path

from service.alerts.observer import AlertObserver
from service.config_loader import LoadedConfig
from service.control.requests import ControlRequest
from service.control.watcher import ControlWatcher
from service.supervisor.observers import EventHub
from service.supervisor.runtime_status import RuntimeStatus
from service.supervisor.worker_handle import WorkerHandle


class OperatorChannels:
    def __init__(
        self,
        config: LoadedConfig,
        state_dir: Path,
        workers: dict[str, WorkerHandle],  # the supervisor's own, kept current by it
        runtime: RuntimeStatus,
        events: EventHub,
    ) -> None:
        self.workers = workers
        self.runtime = runtime
        self.control = ControlWatcher(state_dir, self._forward)
        self.alerts = AlertObserver.from_settings(config.settings.alerts, state_dir,
                                                  lambda: list(self.workers))
        if self.alerts is not None:
            events.observers.append(self.alerts)

    def start(self) -> None:
        if self.alerts is not None:
            self.alerts.start()

    def tick(self, now: float) -> None:
        self.control.poll(now, list(self.workers))
        if self.alerts is not None:
            self.alerts.tick()

    def stop(self) -> None:
        """Last: the messages of the stop itself (a global budget) still go out."""
        if self.alerts is not None:
            self.alerts.stop()

    def _forward(self, account: str, wanted: ControlRequest) -> None:
        """A changed request: into the status (`status`, /healthz), and to the worker if
        it runs (one that starts later reads the file itself)."""
        self.runtime.paused.clear()
        self.runtime.paused.update(self.control.paused)
        worker = self.workers.get(account)
        if worker is not None and worker.alive:
            worker.send(("control", wanted))
