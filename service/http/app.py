"""The endpoint as one WSGI application: six read-only routes and the static files.

    /              the dashboard (static/dashboard.html)
    /metrics       Prometheus text format (prometheus_client's own WSGI app)
    /healthz       200 or 503, JSON (service/http/health.py)
    /api/status    the object `regime-trader status --json` prints, of the running daemon
    /api/charts    ?account=A: the charts' data object (service/web/chart_data.py)
    /static/NAME   the dashboard's files and the vendored uPlot (a fixed list of names)

GET and HEAD only; anything else is 405. Every JSON body passes the log's redactor (no
piece of a loaded key can leave, even if one slipped into a document) and holds no
configuration secret: the documents it serves carry none (docs/http.md, "Security").
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from typing import Any, Protocol
from urllib.parse import parse_qs

from service.http.health import Health
from service.http.static_files import STATIC_PREFIX, static_file
from service.http.types import Reply, StartResponse, WsgiApp
from service.logs import redact

JSON_TYPE = "application/json; charset=utf-8"
REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
           503: "Service Unavailable"}  # fmt: skip
# The page may load only what this endpoint serves: no CDN, no external URL.
PAGE_POLICY = ("default-src 'self'; img-src 'self' data:; object-src 'none'; "
               "base-uri 'none'; frame-ancestors 'none'; form-action 'none'")  # fmt: skip
COMMON_HEADERS = [("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
                  ("Cache-Control", "no-store")]  # fmt: skip


class DaemonView(Protocol):
    """What the endpoint reads from the running supervisor (every call from a server
    thread; the supervisor's side makes each a snapshot)."""

    def status(self) -> dict[str, Any]: ...

    def health(self) -> Health: ...

    def charts(self, account: str) -> dict[str, Any] | None: ...  # None: no such account


class EndpointApp:
    def __init__(self, view: DaemonView, metrics_app: WsgiApp) -> None:
        self.view = view
        self.metrics_app = metrics_app
        self.routes: dict[str, Callable[[dict[str, Any]], Reply]] = {
            "/": lambda environ: self._route("/static/dashboard.html", environ),
            "/healthz": lambda environ: self._health(),
            "/api/status": lambda environ: json_reply(200, self.view.status()),
            "/api/charts": self._charts,
        }

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        method = environ.get("REQUEST_METHOD", "GET")
        path = environ.get("PATH_INFO") or "/"
        if method not in ("GET", "HEAD"):
            reply = json_reply(405, {"error": f"{method}: this endpoint is read-only"})
            return _send(start_response, reply, head=False, extra=[("Allow", "GET, HEAD")])
        if path == "/metrics":
            return self.metrics_app(environ, start_response)
        return _send(start_response, self._route(path, environ), head=method == "HEAD")

    def _route(self, path: str, environ: dict[str, Any]) -> Reply:
        handler = self.routes.get(path)
        if handler is not None:
            return handler(environ)
        if path.startswith(STATIC_PREFIX):
            found = static_file(path.removeprefix(STATIC_PREFIX))
            if found is not None:
                return found
        return json_reply(404, {"error": f"no such page: {path}",
                                "pages": ["/", "/metrics", "/healthz", "/api/status",
                                          "/api/charts?account=NAME"]})  # fmt: skip

    def _health(self) -> Reply:
        health = self.view.health()
        return json_reply(health.status, health.body)

    def _charts(self, environ: dict[str, Any]) -> Reply:
        accounts = parse_qs(environ.get("QUERY_STRING", "")).get("account", [])
        if len(accounts) != 1:
            return json_reply(400, {"error": "expected one ?account=NAME"})
        data = self.view.charts(accounts[0])
        if data is None:
            return json_reply(404, {"error": f"no account {accounts[0]!r} in this daemon"})
        return json_reply(200, data)


def json_reply(status: int, document: Any) -> Reply:
    body = json.dumps(_finite(redact(document)), separators=(",", ":"), default=str)
    return status, JSON_TYPE, body.encode("utf-8")


def _finite(value: Any) -> Any:
    """NaN and infinities as null: JSON has no such numbers and browsers refuse them."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _send(
    start_response: StartResponse, reply: Reply, head: bool,
    extra: list[tuple[str, str]] | None = None,
) -> Iterable[bytes]:  # fmt: skip
    status, content_type, body = reply
    headers = [("Content-Type", content_type), ("Content-Length", str(len(body))),
               *COMMON_HEADERS, *(extra or [])]  # fmt: skip
    if content_type.startswith("text/html"):
        headers.append(("Content-Security-Policy", PAGE_POLICY))
    start_response(f"{status} {REASONS.get(status, 'Error')}", headers)
    return [] if head else [body]
