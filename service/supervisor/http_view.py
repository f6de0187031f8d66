"""What the HTTP endpoint reads of the running supervisor (service.http.app.DaemonView):
its runtime document, the status document, the health verdict and the charts' data."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from service.config_loader import LoadedConfig
from service.http.chart_source import ChartSource
from service.http.health import Health, HealthRule, WorkerStarts, evaluate
from service.state.paths import state_path
from service.status.document import status_document
from service.supervisor.runtime_status import RuntimeStatus
from service.supervisor.worker_handle import WorkerHandle


def now() -> datetime:
    return datetime.now(UTC)


class SupervisorView:
    """The endpoint's reads (service.http.app.DaemonView) of the running supervisor."""

    def __init__(
        self, config: Callable[[], LoadedConfig], state_dir: Path, runtime: RuntimeStatus,
        workers: dict[str, WorkerHandle],
    ) -> None:  # fmt: skip
        self.config = config
        self.state_dir = state_dir
        self.runtime = runtime
        self.workers = workers
        self.rule = HealthRule.of(config().settings)
        self.starts = WorkerStarts()
        self.chart_source = ChartSource(lambda account: state_path(state_dir, account))

    def document(self) -> dict[str, Any]:
        return self.runtime.document(list(self.workers.values()))

    def status(self) -> dict[str, Any]:
        """`status --json`'s object, from this supervisor's own view of its workers, and
        from the checkpoints (never the broker: a page poll makes no broker request)."""
        return status_document(self.config(), self.state_dir, now(), runtime=self.document())

    def health(self) -> Health:
        return evaluate(self.rule, self.document(), self.starts, now())

    def charts(self, account: str) -> dict[str, Any] | None:
        return None if account not in self.workers else self.chart_source.data(account)
