"""/healthz's rule, the WSGI application's routes, the refusal of a remote address, and a
port that cannot be had: in-process, no daemon."""

from __future__ import annotations

import json
import socket
from datetime import UTC, datetime, timedelta
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
import structlog
from prometheus_client import make_wsgi_app
from prometheus_client.parser import text_string_to_metric_families

from service import cli
from service.bench.daemon_harness import two_account_settings, write_config
from service.config_loader import load_config
from service.exit_codes import EX_CONFIG, EX_TEMPFAIL
from service.http.app import EndpointApp
from service.http.health import Health, HealthRule, WorkerStarts, evaluate
from service.http.metrics import DaemonMetrics
from service.http.server import BindError, EndpointServer
from service.http.static_files import OWN
from service.logs import register_secret
from service.settings import ServiceSettings
from service.supervisor.http_endpoint import HttpEndpoint
from service.supervisor.runtime_status import RuntimeStatus

NOW = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)
STARTED = NOW - timedelta(minutes=10)
# paced at 2 s, heartbeat slack 4 x 1 s: an update may be 2 x 2 + 4 = 8 s old
RULE = HealthRule(clock="paced", base_interval_s=2.0, slack_s=4.0, startup_budget_s=300.0)


def account(state: str = "running", age_s: float | None = 3.0, duration_ms: float = 500.0,
            paused: bool = False) -> dict[str, Any]:  # fmt: skip
    last = None if age_s is None else {
        "seq": 9, "at": (NOW - timedelta(seconds=age_s)).isoformat(), "duration_ms": duration_ms}
    return {"state": state, "paused": paused, "last_update": last}


def verdict(rule: HealthRule = RULE, stopping: bool = False, **accounts: Any) -> Health:
    document = {"started_at": STARTED.isoformat(), "stopping": stopping, "accounts": accounts}
    return evaluate(rule, document, WorkerStarts(), NOW)


def test_every_account_on_time_is_200() -> None:
    health = verdict(alpha=account(age_s=7.9), beta=account(age_s=0.5))
    assert health.status == 200 and health.body["status"] == "ok"
    assert health.body["failing"] == {} and health.body["reason"] is None
    assert health.body["accounts"]["alpha"]["allowed_s"] == 8.0


def test_an_account_past_two_intervals_and_the_slack_is_503_with_why() -> None:
    health = verdict(alpha=account(age_s=8.5), beta=account())
    assert health.status == 503 and health.body["status"] == "unhealthy"
    assert list(health.body["failing"]) == ["alpha"]
    assert health.body["failing"]["alpha"].startswith("no update for 8.5 s; allowed 8.0 s")
    assert health.body["reason"].startswith("alpha: no update for 8.5 s")
    json.dumps(health.body)  # the body is JSON as it is


def test_a_slow_update_is_the_interval_when_it_is_longer_than_the_pace() -> None:
    # a 5 s update: 2 x 5 + 4 = 14 s allowed
    assert verdict(alpha=account(age_s=13.0, duration_ms=5000.0)).ok
    assert not verdict(alpha=account(age_s=14.5, duration_ms=5000.0)).ok


def test_parked_retired_and_paused_accounts_are_not_checked() -> None:
    health = verdict(alpha=account("parked", age_s=900.0), beta=account("retired", age_s=None),
                     gamma=account(age_s=900.0, paused=True))  # fmt: skip
    assert health.ok
    assert {n: a["checked"] for n, a in health.body["accounts"].items()} == {
        "alpha": False, "beta": False, "gamma": False}
    assert health.body["accounts"]["gamma"]["reason"] == "paused by the operator"


@pytest.mark.parametrize("state", ["hung", "restarting", "stopped"])
def test_a_worker_that_is_down_is_503_whatever_its_last_update(state: str) -> None:
    health = verdict(alpha=account(state, age_s=0.1))
    assert health.status == 503 and "alpha" in health.body["failing"]


def test_before_the_first_update_the_start_up_budget_applies() -> None:
    assert verdict(alpha=account("starting", age_s=None)).ok
    starts = WorkerStarts()
    starts.on_event({"event": "worker.started", "account": "alpha",
                     "timestamp": (NOW - timedelta(seconds=200)).isoformat()})  # fmt: skip
    stale = account(age_s=400.0)  # the last update is the previous worker's
    document = {"started_at": STARTED.isoformat(), "accounts": {"alpha": stale}}
    assert evaluate(RULE, document, starts, NOW).ok  # 200 s < 300 + 2 x 2 + 4
    starts.at["alpha"] = NOW - timedelta(seconds=320)
    late = evaluate(RULE, document, starts, NOW)
    assert not late.ok and "no first update since its start" in late.body["failing"]["alpha"]


def test_a_stopping_service_is_503() -> None:
    health = verdict(stopping=True, alpha=account())
    assert health.status == 503 and health.body["failing"]["service"] == "the service is stopping"


@pytest.mark.parametrize(("clock", "interval"), [
    ('mode = "paced"\npace_s = 0.5', 0.5), ('mode = "fast"', 0.0), ('mode = "wall"', 60.0)])
def test_the_interval_comes_from_the_clock(clock: str, interval: float) -> None:
    settings = ServiceSettings.model_validate({
        "accounts": [{"name": "alpha"}], "clock": _toml_table(clock),
        "supervision": {"heartbeat_s": 0.5, "missed_heartbeats": 3}})  # fmt: skip
    rule = HealthRule.of(settings)
    assert (rule.base_interval_s, rule.slack_s) == (interval, 1.5)


def _toml_table(lines: str) -> dict[str, Any]:
    import tomllib  # noqa: PLC0415

    return tomllib.loads(lines)


# -- the WSGI application ------------------------------------------------------------


class FakeView:
    def __init__(self) -> None:
        self.document: dict[str, Any] = {"accounts": [{"account": "alpha"}], "healthy": True}

    def status(self) -> dict[str, Any]:
        return self.document

    def health(self) -> Health:
        return verdict(alpha=account(age_s=60.0))

    def charts(self, name: str) -> dict[str, Any] | None:
        return {"kind": "pending", "account": name} if name == "alpha" else None


def get(app: EndpointApp, path: str, method: str = "GET") -> tuple[str, dict[str, str], bytes]:
    path, _, query = path.partition("?")
    environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query,
               "SERVER_NAME": "test", "SERVER_PORT": "80", "wsgi.input": BytesIO(),
               "wsgi.url_scheme": "http", "SERVER_PROTOCOL": "HTTP/1.1"}  # fmt: skip
    said: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        said.update(status=status, headers=dict(headers))

    body = b"".join(app(environ, start_response))
    return said["status"], said["headers"], body


@pytest.fixture
def app() -> EndpointApp:
    metrics = DaemonMetrics(lambda: {"accounts": {}}, lambda: NOW)
    return EndpointApp(FakeView(), make_wsgi_app(metrics.registry))


def test_the_routes_answer_with_their_status_and_type(app: EndpointApp) -> None:
    status, headers, body = get(app, "/")
    assert status == "200 OK" and headers["Content-Type"].startswith("text/html")
    assert "default-src 'self'" in headers["Content-Security-Policy"]
    assert b"static/dashboard.js" in body
    status, headers, body = get(app, "/healthz")
    assert status == "503 Service Unavailable" and "alpha" in json.loads(body)["failing"]
    assert json.loads(get(app, "/api/status")[2])["healthy"] is True
    assert json.loads(get(app, "/api/charts?account=alpha")[2])["kind"] == "pending"
    assert get(app, "/api/charts?account=zed")[0].startswith("404")
    assert get(app, "/api/charts")[0].startswith("400")
    status, headers, body = get(app, "/metrics")
    assert status.startswith("200") and headers["Content-Type"].startswith("text/plain")
    list(text_string_to_metric_families(body.decode()))
    for name in ("uPlot.iife.min.js", "uPlot.min.css", "charts.js", "charts.css",
                 "dashboard.js", "dashboard.css", "uPlot.LICENSE"):  # fmt: skip
        assert get(app, f"/static/{name}")[0] == "200 OK", name


def test_nothing_but_get_and_head_and_nothing_outside_the_list(app: EndpointApp) -> None:
    status, headers, _ = get(app, "/metrics", method="POST")
    assert status.startswith("405") and headers["Allow"] == "GET, HEAD"
    assert get(app, "/healthz", method="HEAD")[2] == b""
    for path in ("/static/../app.py", "/static/vendor/uplot/LICENSE", "/etc/passwd", "/api"):
        assert get(app, path)[0].startswith("404"), path


def test_the_page_loads_nothing_from_outside(app: EndpointApp) -> None:
    for name in OWN:
        text = get(app, f"/static/{name}")[2].decode()
        assert "://" not in text, f"{name} names an outside URL"


def test_no_piece_of_a_loaded_key_leaves_in_a_json_body(app: EndpointApp) -> None:
    secret = "Wq7vZr2XkPn9Ls4Td8Yb"  # registered as service/secrets.py registers each key
    register_secret(secret)
    view = app.view
    assert isinstance(view, FakeView)
    error = {"reason": f"401 {secret[:10]}"}  # a piece of the key, in a broker's answer
    view.document = {"accounts": [{"account": "alpha", "last_error": error}]}
    body = get(app, "/api/status")[2].decode()
    assert secret[:6] not in body and "[REDACTED]" in body


# -- the address ---------------------------------------------------------------------


def test_a_remote_address_is_refused_without_allow_remote(tmp_path: Path) -> None:
    config_path = write_config(tmp_path / "config", two_account_settings())
    config = load_config(config_path)
    with pytest.raises(ValueError, match="allow_remote"):
        cli.with_http(config, "0.0.0.0:9464")
    with pytest.raises(ValueError, match="HOST:PORT"):
        cli.with_http(config, "9464")
    assert cli.with_http(config, "127.0.0.1:9464").settings.http.listen == "127.0.0.1:9464"
    assert config.settings.http.listen is None  # the loaded configuration is untouched
    code = cli.main(["run", "--config", str(config_path), "--state-dir", str(tmp_path / "s"),
                     "--http", "0.0.0.0:9464"])  # fmt: skip
    assert code == EX_CONFIG and not (tmp_path / "s").exists()  # refused before anything
    allowed = write_config(tmp_path / "remote", two_account_settings(
        sections='\n[http]\nlisten = "127.0.0.1:9464"\nallow_remote = true\n'))
    remote = cli.with_http(load_config(allowed), "0.0.0.0:9464")
    assert remote.settings.http.listen == "0.0.0.0:9464"


def test_a_port_in_use_stops_the_daemon_with_75_and_says_what_to_do(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        listen = f"127.0.0.1:{taken.getsockname()[1]}"
        with pytest.raises(BindError) as raised:
            EndpointServer(listen, lambda environ, start: []).bind()
        assert raised.value.exit_code == EX_TEMPFAIL and "in use" in str(raised.value)
        endpoint = HttpEndpoint(EndpointServer(listen, lambda environ, start: []),
                                RuntimeStatus(tmp_path, "hash"))  # fmt: skip
        with structlog.testing.capture_logs() as logs:
            assert endpoint.bind() == EX_TEMPFAIL
    failed = [e for e in logs if e["event"] == "http.failed"]
    assert failed and failed[0]["exit_code"] == EX_TEMPFAIL and failed[0]["next"]


def test_an_address_of_no_interface_here_is_78() -> None:
    with pytest.raises(BindError) as raised:
        EndpointServer("192.0.2.1:9464", lambda environ, start: []).bind()  # TEST-NET-1
    assert raised.value.exit_code == EX_CONFIG
