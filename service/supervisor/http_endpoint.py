"""The supervisor's side of the HTTP endpoint (service/http/): what it reads, and when it
starts and stops.

Off unless `[http] listen` (or `run --http`) names an address. Then the metrics and the
start times `/healthz` needs are observers from the first event on; the address is bound
before any worker starts (a port that cannot be had stops the daemon at once: 75 when it
is in use, 78 when it can never work) and served once the workers are spawned.

The server's threads read the supervisor's state while its loop changes it. Each read is
a snapshot: the worker handles are copied into a list first (one step under the GIL), and
what a document reads of each is replaced whole by the loop, never changed in place.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from service.supervisor.observers import EventHub
from service.supervisor.runtime_status import RuntimeStatus
from service.supervisor.worker_handle import WorkerHandle

if TYPE_CHECKING:
    from service.config_loader import LoadedConfig
    from service.http.server import EndpointServer

log = structlog.get_logger("service.supervisor")


class HttpEndpoint:
    def __init__(self, server: EndpointServer | None, runtime: RuntimeStatus) -> None:
        self.server = server  # None: the endpoint is off
        self.runtime = runtime
        self.address: str | None = None

    def bind(self) -> int | None:
        """Take the address; None when done (or off), else the exit code, logged."""
        if self.server is None:
            return None
        from service.http.server import BindError  # noqa: PLC0415 - the endpoint is on

        try:
            self.address = self.server.bind()
        except BindError as error:
            log.error("http.failed", listen=self.server.listen, reason=str(error),
                      exit_code=error.exit_code,
                      next="fix [http] listen or run --http, or free the port, and start "
                           "again")  # fmt: skip
            return error.exit_code
        return None

    def start(self) -> None:
        if self.server is None or self.address is None:
            return
        self.server.start()
        self.runtime.http = self.address
        log.info("http.started", address=self.address, url=f"http://{self.address}/")

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


def http_endpoint(
    config: Callable[[], LoadedConfig], state_dir: Path, runtime: RuntimeStatus,
    workers: dict[str, WorkerHandle], events: EventHub,
) -> HttpEndpoint:  # fmt: skip
    """The endpoint the settings ask for (off when `[http] listen` is unset); its
    observers join `events` now, so the metrics count from the first event."""
    listen = config().settings.http.listen
    if listen is None:
        return HttpEndpoint(None, runtime)
    # The endpoint's stack (prometheus-client, the status and chart readers) is loaded only
    # when it is on: a daemon without it starts 0.3 s of CPU sooner (service.http).
    from prometheus_client import make_wsgi_app  # noqa: PLC0415

    from service.http.app import EndpointApp  # noqa: PLC0415
    from service.http.metrics import DaemonMetrics  # noqa: PLC0415
    from service.http.server import EndpointServer  # noqa: PLC0415
    from service.supervisor.http_view import SupervisorView, now  # noqa: PLC0415

    view = SupervisorView(config, state_dir, runtime, workers)
    metrics = DaemonMetrics(view.document, now)
    events.observers.extend([metrics, view.starts])
    app = EndpointApp(view, make_wsgi_app(metrics.registry))
    return HttpEndpoint(EndpointServer(listen, app), runtime)
