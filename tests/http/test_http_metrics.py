"""The metrics observer fed real event dicts (the shapes the daemon logs), read back with
prometheus_client's own parser."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from pytest import approx

from service.http.metrics import DaemonMetrics
from service.supervisor.observers import EventHub

NOW = datetime(2026, 12, 1, 10, 0, 0, tzinfo=UTC)
Samples = dict[str, list[tuple[dict[str, str], float]]]


def update_event(
    account: str, seq: int, backend: str = "numpy", adapter: str = "cpu"
) -> dict[str, Any]:
    """update.completed as a worker logs it (README.md, docs/logs.md)."""
    return {
        "seq": seq, "bar_time": "2026-01-05T18:59:00+00:00", "instruments": 8, "modelled": 8,
        "backend": backend, "adapter": adapter, "numerics": "float64", "duration_ms": 211.4,
        "timings_ms": {"reconcile": 0.2, "fetch": 0.4, "model": 205.1, "strategy": 1.2,
                       "checkpoint": 3.9, "orders": 0.6},
        "orders": 1, "divergences": 2, "unconverged": ["SPY", "QQQ"], "behind_bars": 0,
        "event": "update.completed", "level": "info", "account": account, "pid": 4242,
        "timestamp": "2026-12-01T09:45:00.123Z",
    }  # fmt: skip


def event(name: str, account: str | None = "alpha", **fields: Any) -> dict[str, Any]:
    base = {"event": name, "level": "info", "pid": 4242, "timestamp": "2026-12-01T09:45:01Z"}
    return {**base, **({"account": account} if account else {}), **fields}


def snapshot() -> dict[str, Any]:
    at = (NOW - timedelta(seconds=12)).isoformat().replace("+00:00", "Z")
    return {"accounts": {
        "alpha": {"state": "running", "paused": False, "last_update": {"seq": 3, "at": at}},
        "beta": {"state": "restarting", "paused": True, "last_update": None},
    }}  # fmt: skip


def samples(metrics: DaemonMetrics) -> Samples:
    text = generate_latest(metrics.registry).decode("utf-8")
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def value(found: Samples, name: str, **labels: str) -> float:
    matches = [v for got, v in found.get(name, [])
               if all(got.get(k) == w for k, w in labels.items())]  # fmt: skip
    assert len(matches) == 1, f"{name} {labels}: {found.get(name)}"
    return matches[0]


def test_every_event_kind_is_counted_and_read_back_by_the_prometheus_parser() -> None:
    metrics = DaemonMetrics(snapshot, lambda: NOW)
    hub = EventHub([metrics])
    for e in (
        update_event("alpha", 1),
        update_event("alpha", 2, backend="wgpu", adapter="llvmpipe"),
        update_event("beta", 1),
        event("order.resolved", status="filled", symbol="SPY"),
        event("order.resolved", status="rejected", symbol="QQQ"),
        event("order.resolved", status="something new", symbol="QQQ"),
        event("alpaca.retry", call="GET /v2/stocks/bars SPY,QQQ 2026-01-05T14:30..", attempt=1),
        event("order.resending", client_order_id="rt-1", attempt=2),
        event("broker.unreachable", attempt=1, retry_in_s=2.0),
        event("alpaca.rate_limited", status=429),
        event("update.failed", reason="broker down"),
        event("backend.fallback", call="run_update", to="numpy"),
        event("worker.restarted", restarts=1, worker_pid=77),
        event("config.applied", account=None, source="watch"),
        event("config.rejected", account=None, source="sighup", errors=["bad"]),
        event("config.rejected", account=None, errors=["at start: no source"]),
        event("config.unchanged", account=None, source="poll"),
        event("service.started", account=None),  # not counted: no error either
    ):
        hub.publish(e)
    found = samples(metrics)

    assert value(found, "regime_trader_update_duration_seconds_count", account="alpha") == 2
    total = value(found, "regime_trader_update_duration_seconds_sum", account="alpha")
    assert total == approx(2 * 0.2114)
    assert value(found, "regime_trader_update_stage_seconds_count", account="beta",
                 stage="model") == 1  # fmt: skip
    stages = {labels["stage"] for labels, _ in found["regime_trader_update_stage_seconds_count"]}
    assert stages == {"reconcile", "fetch", "model", "strategy", "checkpoint", "orders"}
    assert value(found, "regime_trader_updates_total", account="alpha") == 2
    assert value(found, "regime_trader_orders_total", account="alpha", outcome="filled") == 1
    assert value(found, "regime_trader_orders_total", account="alpha", outcome="rejected") == 1
    assert value(found, "regime_trader_orders_total", account="alpha", outcome="other") == 1
    assert value(found, "regime_trader_broker_retries_total", call="GET /v2/stocks/bars") == 1
    assert value(found, "regime_trader_broker_retries_total", call="POST /v2/orders") == 1
    assert value(found, "regime_trader_broker_faults_total", kind="broker.unreachable") == 1
    assert value(found, "regime_trader_broker_faults_total", kind="alpaca.rate_limited") == 1
    assert value(found, "regime_trader_update_failures_total", account="alpha") == 1
    assert value(found, "regime_trader_backend_fallbacks_total", account="alpha") == 1
    assert value(found, "regime_trader_worker_restarts_total", account="alpha") == 1
    assert value(found, "regime_trader_reloads_total", outcome="accepted") == 1
    assert value(found, "regime_trader_reloads_total", outcome="refused") == 1  # not the start's
    assert value(found, "regime_trader_reloads_total", outcome="unchanged") == 1
    assert value(found, "regime_trader_divergences_total", account="alpha") == 4
    assert value(found, "regime_trader_unconverged_estimates_total", account="beta") == 2
    # the backend of the LAST update only: the old label set is gone
    backends = [(labels["backend"], labels["adapter"]) for labels, _ in
                found["regime_trader_backend_info"] if labels["account"] == "alpha"]  # fmt: skip
    assert backends == [("wgpu", "llvmpipe")]


def test_checkpoint_age_worker_state_and_pause_are_read_at_scrape_time() -> None:
    found = samples(DaemonMetrics(snapshot, lambda: NOW))
    assert value(found, "regime_trader_checkpoint_age_seconds", account="alpha") == 12.0
    assert "beta" not in {labels["account"] for labels, _ in
                          found["regime_trader_checkpoint_age_seconds"]}  # fmt: skip
    assert value(found, "regime_trader_worker_state", account="alpha", state="running") == 1
    assert value(found, "regime_trader_worker_state", account="alpha", state="hung") == 0
    assert value(found, "regime_trader_worker_state", account="beta", state="restarting") == 1
    assert value(found, "regime_trader_account_paused", account="beta") == 1
    assert value(found, "regime_trader_account_paused", account="alpha") == 0


def test_the_shared_device_process_state_is_read_at_scrape_time() -> None:
    assert "regime_trader_device_state" not in samples(DaemonMetrics(snapshot, lambda: NOW))

    def with_device() -> dict[str, Any]:
        return {**snapshot(), "device": {"state": "restarting", "pid": None, "starts": 3}}

    found = samples(DaemonMetrics(with_device, lambda: NOW))
    assert value(found, "regime_trader_device_state", state="restarting") == 1
    assert value(found, "regime_trader_device_state", state="running") == 0
    assert value(found, "regime_trader_device_starts") == 3


def test_metrics_live_in_a_registry_of_their_own() -> None:
    from prometheus_client import REGISTRY  # noqa: PLC0415 - the global one, to compare

    DaemonMetrics(snapshot, lambda: NOW).on_event(update_event("alpha", 1))
    assert b"regime_trader_" not in generate_latest(REGISTRY)
