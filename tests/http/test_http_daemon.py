"""The endpoint of a real daemon (`run --http`): /metrics parses and has the update
histogram, /api/status is the status object, and /healthz turns 503, naming the account,
when its worker is stopped with SIGSTOP, and 200 again after SIGCONT. One daemon, one
test: the steps share it (xdist would otherwise split them over two daemons)."""

from __future__ import annotations

import os
import signal
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from http_daemon import fetch, fetch_json, poll_until, start_daemon
from prometheus_client.parser import text_string_to_metric_families

from service.bench.daemon_harness import DaemonProcess, two_account_settings, write_config
from service.config_loader import load_config
from service.status.document import status_document

# Paced at 0.4 s with a 1 s heartbeat slack: /healthz allows an update 2 x max(0.4 s, the
# last update's duration) + 1 s old, so a stopped worker shows within about two seconds.
SETTINGS = two_account_settings(
    clock='mode = "paced"\npace_s = 0.4', window=32,
    sections="\n[supervision]\nheartbeat_s = 0.5\nmissed_heartbeats = 2\n"
             "shutdown_budget_s = 5\nbackoff_initial_s = 0.05\n",
)  # fmt: skip


def updated(account: str, seq: int) -> Any:
    return lambda e: (e.get("event") == "update.completed" and e.get("account") == account
                      and e["seq"] >= seq)  # fmt: skip


def metric_samples(url: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    status, content_type, body = fetch(url + "metrics")
    assert status == 200 and content_type.startswith("text/plain"), content_type
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(body.decode("utf-8")):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def check_metrics(url: str) -> None:
    found = metric_samples(url)
    counts = {labels["account"]: v for labels, v in
              found["regime_trader_update_duration_seconds_count"]}  # fmt: skip
    assert counts.keys() == {"alpha", "beta"} and min(counts.values()) >= 1, counts
    stages = {labels["stage"] for labels, _ in found["regime_trader_update_stage_seconds_bucket"]}
    assert {"fetch", "model", "strategy", "checkpoint", "orders"} <= stages
    assert {labels["backend"] for labels, _ in found["regime_trader_backend_info"]} == {"numpy"}
    ages = {labels["account"]: v for labels, v in found["regime_trader_checkpoint_age_seconds"]}
    assert ages.keys() == {"alpha", "beta"} and all(0 <= a < 60 for a in ages.values()), ages


def check_status(url: str, config: Path, state: Path) -> dict[str, Any]:
    status, served = fetch_json(url + "api/status")
    assert status == 200
    printed = status_document(load_config(config), state, datetime.now(UTC))  # status --json
    assert served.keys() == printed.keys()
    assert served["daemon"].keys() == printed["daemon"].keys()
    assert [a["account"] for a in served["accounts"]] == ["alpha", "beta"]
    for mine, theirs in zip(served["accounts"], printed["accounts"], strict=True):
        assert mine.keys() == theirs.keys()
    assert served["daemon"]["state"] == "running" and served["daemon"]["http"] in url
    return served


def healthz(url: str) -> tuple[int, Any]:
    return fetch_json(url + "healthz")


def test_metrics_status_and_healthz_of_a_running_daemon(tmp_path: Path) -> None:
    config, state = write_config(tmp_path / "config", SETTINGS), tmp_path / "state"
    daemon, url = start_daemon("--config", str(config), "--state-dir", str(state))
    try:
        for account in ("alpha", "beta"):
            daemon.wait_for(updated(account, 1), timeout=60)
        check_metrics(url)
        served = check_status(url, config, state)
        poll_until("/healthz 200", lambda: healthz(url), lambda r: r[0] == 200, 20, daemon)
        stop_one_worker_and_see_healthz_name_it(daemon, url, served)
        daemon.signal(signal.SIGTERM)
        assert daemon.wait_exit(60) == 0, daemon.report("no clean stop")
        assert not daemon.named("http.failed")
    finally:
        daemon.stop()


def stop_one_worker_and_see_healthz_name_it(
    daemon: DaemonProcess, url: str, served: dict[str, Any]
) -> None:
    alpha = next(a for a in served["accounts"] if a["account"] == "alpha")
    pid = alpha["worker_pid"]
    assert pid == daemon.named("worker.started", account="alpha")[-1]["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        _, body = poll_until("/healthz 503 naming alpha", lambda: healthz(url),
                             lambda r: r[0] == 503 and "alpha" in r[1]["failing"], 30, daemon)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert body["status"] == "unhealthy" and body["accounts"]["alpha"]["ok"] is False
    assert body["reason"].startswith("alpha: ")
    poll_until("/healthz 200 after SIGCONT", lambda: healthz(url), lambda r: r[0] == 200, 60,
               daemon)  # fmt: skip
