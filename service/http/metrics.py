"""The daemon's Prometheus metrics: an observer of the supervisor's log events.

Every count comes from a log event (service/event_tap.py: the supervisor's own and every
worker's), so what `/metrics` says happened is what the log says happened. The metrics
live in a registry of our own (never prometheus_client's global one, so nothing else in
the process can add to them or be served by accident). Two gauges are read at scrape
time instead: the age of each account's last checkpoint and each worker's state, from
the supervisor's runtime document. Labels take only bounded values (account names from
the configuration, stage names from the code, order statuses from OrderStatus, event
names) so no event can grow the series without bound. docs/http.md lists every metric.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from service.http.timestamps import parse_utc, seconds_between
from service.types import OrderStatus

PREFIX = "regime_trader_"
# An update takes milliseconds (a small batch on numpy) to minutes (a cold GPU start).
SECONDS_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                   10.0, 30.0, 60.0, 120.0, 300.0)  # fmt: skip
ORDER_OUTCOMES = frozenset(s.value for s in OrderStatus)
# Log events that mean the broker misbehaved (kind = the event's name).
BROKER_FAULTS = frozenset({"broker.unreachable", "broker.auth_failed", "alpaca.rate_limited",
                           "order.unknown", "order.lookup_failed", "order.rejected"})  # fmt: skip
RELOAD_OUTCOMES = {"config.applied": "accepted", "config.rejected": "refused",
                   "config.unchanged": "unchanged"}  # fmt: skip
WORKER_STATES = ("starting", "running", "hung", "restarting", "parked", "retired", "stopped")
# the shared device process's states (service/supervisor/device_handle.py)
DEVICE_STATES = ("off", "running", "restarting", "unavailable", "stopped")
Snapshot = Callable[[], dict[str, Any]]


class DaemonMetrics:
    """An observer (service/supervisor/observers.py) that keeps the metrics."""

    def __init__(self, snapshot: Snapshot, now: Callable[[], datetime]) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.update_seconds = Histogram(
            PREFIX + "update_duration_seconds", "Wall time of one committed update",
            ["account"], registry=r, buckets=SECONDS_BUCKETS)  # fmt: skip
        self.stage_seconds = Histogram(
            PREFIX + "update_stage_seconds", "Wall time of one stage of an update",
            ["account", "stage"], registry=r, buckets=SECONDS_BUCKETS)  # fmt: skip
        self.updates = _counter("updates", "Committed updates", ["account"], r)
        self.update_failures = _counter("update_failures", "Updates that failed and are "
                                        "retried at the next bar", ["account"], r)  # fmt: skip
        self.orders = _counter("orders", "Order intents resolved, by the broker's answer",
                               ["account", "outcome"], r)  # fmt: skip
        self.faults = _counter("broker_faults", "Broker faults, by the event that reported "
                               "them", ["account", "kind"], r)  # fmt: skip
        self.retries = _counter("broker_retries", "Broker calls tried again",
                                ["account", "call"], r)  # fmt: skip
        self.restarts = _counter("worker_restarts", "Workers started again", ["account"], r)
        self.reloads = _counter("reloads", "Reloads of the instruments file, by outcome",
                                ["outcome"], r)  # fmt: skip
        self.divergences = _counter("divergences", "Divergent HMC transitions", ["account"], r)
        self.unconverged = _counter("unconverged_estimates", "Estimates that failed the "
                                    "convergence gate", ["account"], r)  # fmt: skip
        self.fallbacks = _counter("backend_fallbacks", "GPU calls that fell back to numpy",
                                  ["account"], r)  # fmt: skip
        self.backend = Gauge(PREFIX + "backend_info", "The backend of the last update (1)",
                             ["account", "backend", "adapter", "numerics"], registry=r)
        self._backend_labels: dict[str, tuple[str, str, str]] = {}
        r.register(RuntimeCollector(snapshot, now))

    def on_event(self, event: dict[str, Any]) -> None:
        name = str(event.get("event"))
        account = str(event.get("account") or "")
        handler = _HANDLERS.get(name)
        if handler is not None:
            handler(self, account, event)
        elif name in BROKER_FAULTS:
            self.faults.labels(account, name).inc()
        elif name in RELOAD_OUTCOMES and (name != "config.rejected" or "source" in event):
            self.reloads.labels(RELOAD_OUTCOMES[name]).inc()  # a rejection at start has no source

    def _update(self, account: str, event: dict[str, Any]) -> None:
        self.updates.labels(account).inc()
        self.update_seconds.labels(account).observe(_seconds(event.get("duration_ms")))
        for stage, ms in (event.get("timings_ms") or {}).items():
            self.stage_seconds.labels(account, str(stage)).observe(_seconds(ms))
        self.divergences.labels(account).inc(_count(event.get("divergences")))
        self.unconverged.labels(account).inc(_count(event.get("unconverged")))
        self._set_backend(account, event)

    def _set_backend(self, account: str, event: dict[str, Any]) -> None:
        labels = tuple(str(event.get(k)) for k in ("backend", "adapter", "numerics"))
        previous = self._backend_labels.get(account)
        if previous == labels:
            return
        if previous is not None:
            self.backend.remove(account, *previous)
        self.backend.labels(account, *labels).set(1)
        self._backend_labels[account] = (labels[0], labels[1], labels[2])

    def _order(self, account: str, event: dict[str, Any]) -> None:
        status = str(event.get("status"))
        self.orders.labels(account, status if status in ORDER_OUTCOMES else "other").inc()

    def _retry(self, account: str, event: dict[str, Any]) -> None:
        self.retries.labels(account, call_of(event)).inc()


def _on_failure(m: DaemonMetrics, account: str, event: dict[str, Any]) -> None:
    m.update_failures.labels(account).inc()


def _on_restart(m: DaemonMetrics, account: str, event: dict[str, Any]) -> None:
    m.restarts.labels(account).inc()


def _on_fallback(m: DaemonMetrics, account: str, event: dict[str, Any]) -> None:
    m.fallbacks.labels(account).inc()


_HANDLERS: dict[str, Callable[[DaemonMetrics, str, dict[str, Any]], None]] = {
    "update.completed": DaemonMetrics._update,
    "update.failed": _on_failure,
    "order.resolved": DaemonMetrics._order,
    "alpaca.retry": DaemonMetrics._retry,
    "order.resending": DaemonMetrics._retry,
    "worker.restarted": _on_restart,
    "backend.fallback": _on_fallback,
}


def call_of(event: dict[str, Any]) -> str:
    """A bounded label for a retried call: "GET /v2/stocks/bars", not its symbols and times."""
    if event.get("event") == "order.resending":
        return "POST /v2/orders"
    return " ".join(str(event.get("call", "")).split()[:2]) or "unknown"


def _counter(name: str, doc: str, labels: list[str], registry: CollectorRegistry) -> Counter:
    return Counter(PREFIX + name, doc, labels, registry=registry)  # exposed as NAME_total


def _seconds(ms: Any) -> float:
    return float(ms) / 1e3 if isinstance(ms, int | float) else 0.0


def _count(value: Any) -> int:
    if isinstance(value, list | tuple):
        return len(value)
    return int(value) if isinstance(value, int | float) else 0


class RuntimeCollector(Collector):
    """The gauges read at scrape time from the supervisor's runtime document."""

    def __init__(self, snapshot: Snapshot, now: Callable[[], datetime]) -> None:
        self.snapshot = snapshot
        self.now = now

    def collect(self) -> Iterable[GaugeMetricFamily]:
        document = self.snapshot()
        accounts: dict[str, Any] = document.get("accounts", {})
        yield self._checkpoint_age(accounts)
        yield self._worker_state(accounts)
        paused = GaugeMetricFamily(PREFIX + "account_paused", "1 while the operator has "
                                   "paused the account", labels=["account"])  # fmt: skip
        for account, info in accounts.items():
            paused.add_metric([account], 1.0 if info.get("paused") else 0.0)
        yield paused
        device = document.get("device")
        if isinstance(device, dict):  # [model] shared_device: the device process
            state = GaugeMetricFamily(PREFIX + "device_state", "1 for the shared device "
                                      "process's current state", labels=["state"])  # fmt: skip
            for name in DEVICE_STATES:
                state.add_metric([name], 1.0 if device.get("state") == name else 0.0)
            yield state
            starts = GaugeMetricFamily(PREFIX + "device_starts", "Times the supervisor "
                                       "started the shared device process")  # fmt: skip
            starts.add_metric([], float(device.get("starts") or 0))
            yield starts

    def _checkpoint_age(self, accounts: dict[str, Any]) -> GaugeMetricFamily:
        age = GaugeMetricFamily(PREFIX + "checkpoint_age_seconds", "Seconds since the "
                                "account's last committed update (its checkpoint), as seen "
                                "by this supervisor", labels=["account"])  # fmt: skip
        now = self.now()
        for account, info in accounts.items():
            at = parse_utc((info.get("last_update") or {}).get("at"))
            if at is not None:
                age.add_metric([account], max(0.0, seconds_between(at, now)))
        return age

    def _worker_state(self, accounts: dict[str, Any]) -> GaugeMetricFamily:
        state = GaugeMetricFamily(PREFIX + "worker_state", "1 for the worker's current state",
                                  labels=["account", "state"])  # fmt: skip
        for account, info in accounts.items():
            for name in WORKER_STATES:
                state.add_metric([account, name], 1.0 if info.get("state") == name else 0.0)
        return state
