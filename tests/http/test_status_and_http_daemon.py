"""One real daemon (`run --http`) asked by `regime-trader status` and by its own HTTP
endpoint, from start to stop. Account alpha's state database belongs to beta, so alpha's
worker refuses to start (78) and is parked for good, while beta trades.

While it runs: `status` says running, with the daemon's pid, each worker's state, and the
parked account's reason and cause; /api/status is `status --json`'s object and agrees on
the pid and the states; /metrics parses and has beta's update histogram; /healthz is 200
with alpha parked (listed, not checked), 503 naming beta while beta's worker is stopped
with SIGSTOP, and 200 again after SIGCONT. After SIGTERM it exits 78 (an account parked
for good), `status` says stopped and what each account was, and `status --live` asks the
simulated broker, which agrees with beta's checkpoint.

One daemon, one test: the steps share it and run in this order; as separate tests,
pytest-xdist (`-n 2`) would split them over two processes and each would start its own
daemon. Every wait is on an event (the daemon's log) or a polled condition with a
deadline, never on time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from http_daemon import ROOT, fetch, fetch_json, poll_until, start_daemon
from prometheus_client.parser import text_string_to_metric_families

from service.bench.daemon_harness import DaemonProcess, two_account_settings, write_config
from service.config_loader import load_config
from service.exit_codes import EX_CONFIG
from service.state.paths import state_path
from service.state.status_reads import read_snapshot
from service.state.store import StateStore
from service.status import EXIT_NOT_HEALTHY
from service.status.document import status_document

# Paced at 0.4 s with a 1 s heartbeat slack: /healthz allows an update 2 x max(0.4 s, the
# last update's duration) + 1 s old, so a stopped worker shows within about two seconds.
SETTINGS = two_account_settings(
    clock='mode = "paced"\npace_s = 0.4', window=32,
    sections="\n[supervision]\nheartbeat_s = 0.5\nmissed_heartbeats = 2\n"
             "shutdown_budget_s = 5\nbackoff_initial_s = 0.05\n",
)  # fmt: skip
DEADLINE_S = 120.0  # generous for a loaded 2-core machine: every wait ends at its event


@dataclass
class Said:
    """What `status` answered: its exit code, its `--json` object, its text."""

    code: int
    doc: dict[str, Any]
    text: str


def status(config: Path, state: Path, *flags: str) -> Said:
    """`regime-trader status [FLAGS]`, asked twice at once: with --json and as text."""
    args = [sys.executable, "-m", "service.cli", "status", "--config", str(config),
            "--state-dir", str(state), *flags]  # fmt: skip
    as_json, as_text = (subprocess.Popen(a, stdout=subprocess.PIPE, text=True, cwd=ROOT)
                        for a in ([*args, "--json"], args))  # fmt: skip
    with as_json, as_text:
        doc, text = as_json.communicate(timeout=60)[0], as_text.communicate(timeout=60)[0]
    return Said(as_json.returncode, json.loads(doc), text)


def account(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(a for a in doc["accounts"] if a["account"] == name)


def is_(name: str, who: str) -> Any:
    return lambda e: e.get("event") == name and e.get("account") == who


def healthz(url: str) -> tuple[int, Any]:
    return fetch_json(url + "healthz")


def metric_samples(url: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    code, content_type, body = fetch(url + "metrics")
    assert code == 200 and content_type.startswith("text/plain"), content_type
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(body.decode("utf-8")):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def test_a_daemon_with_a_parked_account_is_seen_alike_by_status_and_its_http_endpoint(
    tmp_path: Path,
) -> None:
    config, state = write_config(tmp_path / "config", SETTINGS), tmp_path / "state"
    StateStore(state_path(state, "alpha"), account="beta").close()  # not alpha's: 78
    daemon, url = start_daemon("--config", str(config), "--state-dir", str(state))
    try:
        daemon.wait_for(is_("account.parked", "alpha"), DEADLINE_S)
        daemon.wait_for(is_("update.completed", "beta"), DEADLINE_S)
        running = status_once_it_shows_what_the_log_said(daemon, config, state)
        status_on_a_running_daemon_says_running_with_its_pid_and_each_workers_state(
            running, daemon)
        status_shows_a_parked_account_with_its_reason_and_cause(running)
        served = api_status_is_the_status_object_and_agrees_on_the_pid_and_states(
            url, running, daemon)
        metrics_parse_and_have_the_update_histogram_of_the_trading_account(url)
        healthz_is_200_with_the_parked_account_listed_but_not_checked(url, daemon)
        healthz_turns_503_naming_a_stopped_worker_then_200_after_sigcont(url, served, daemon)
        daemon.signal(signal.SIGTERM)
        exit_code = daemon.wait_exit(DEADLINE_S)
    finally:
        daemon.stop()
    assert exit_code == EX_CONFIG, daemon.report("an account parked for good: 78 at the end")
    assert not daemon.named("http.failed")
    status_after_the_daemon_stopped_says_stopped_and_what_each_account_was(
        status(config, state), daemon)
    status_live_asks_the_simulated_broker_which_agrees_with_the_checkpoint(
        status(config, state, "--live"), state)


def status_once_it_shows_what_the_log_said(
    daemon: DaemonProcess, config: Path, state: Path
) -> Said:
    """Polls the status object (what `status --json` prints, read in this process) until
    the runtime file, rewritten once a second, says what the log already said; then asks
    the command itself."""
    loaded = load_config(config)

    def shows(doc: dict[str, Any]) -> bool:
        return bool(account(doc, "alpha")["state"] == "parked"
                    and account(doc, "beta")["last_state"] == "running")  # fmt: skip

    poll_until("status: alpha parked, beta running",
               lambda: status_document(loaded, state, datetime.now(UTC)), shows, DEADLINE_S,
               daemon)  # fmt: skip
    return status(config, state)


def status_on_a_running_daemon_says_running_with_its_pid_and_each_workers_state(
    running: Said, daemon: DaemonProcess
) -> None:
    pid, doc = daemon.proc.pid, running.doc
    assert (doc["daemon"]["state"], doc["daemon"]["running"], doc["daemon"]["pid"]) == (
        "running", True, pid)
    assert doc["daemon"]["heartbeat_age_s"] < 10
    beta = account(doc, "beta")
    assert (beta["state"], beta["health"]) == ("running", "ok")
    assert beta["worker_pid"] == daemon.named("worker.started", account="beta")[-1]["pid"]
    assert beta["equity"] is not None and beta["positions"] and beta["pnl"]["since_start"]
    assert f"daemon  running: pid {pid}" in running.text
    assert "beta  running" in running.text.splitlines()


def status_shows_a_parked_account_with_its_reason_and_cause(running: Said) -> None:
    alpha = account(running.doc, "alpha")
    assert (alpha["state"], alpha["health"]) == ("parked", "down")
    assert "78" in alpha["reason"]
    assert alpha["cause"]["event"] == "state.unusable" and "'beta'" in alpha["cause"]["reason"]
    assert running.code == EXIT_NOT_HEALTHY and running.doc["healthy"] is False
    assert any(line.startswith("alpha  parked:") for line in running.text.splitlines())


def api_status_is_the_status_object_and_agrees_on_the_pid_and_states(
    url: str, running: Said, daemon: DaemonProcess
) -> dict[str, Any]:
    code, served = fetch_json(url + "api/status")
    assert isinstance(served, dict)
    assert code == 200
    printed = running.doc  # what `status --json` printed
    assert served.keys() == printed.keys()
    assert served["daemon"].keys() == printed["daemon"].keys()
    assert [a["account"] for a in served["accounts"]] == ["alpha", "beta"]
    for mine, theirs in zip(served["accounts"], printed["accounts"], strict=True):
        assert mine.keys() == theirs.keys()
        assert (mine["state"], mine["worker_pid"]) == (theirs["state"], theirs["worker_pid"])
    assert (served["daemon"]["state"], served["daemon"]["pid"]) == ("running", daemon.proc.pid)
    assert served["daemon"]["http"] in url
    return served


def metrics_parse_and_have_the_update_histogram_of_the_trading_account(url: str) -> None:
    found = metric_samples(url)
    counts = {labels["account"]: v for labels, v in
              found["regime_trader_update_duration_seconds_count"]}  # fmt: skip
    assert counts.keys() == {"beta"} and counts["beta"] >= 1, counts  # alpha never updated
    stages = {labels["stage"] for labels, _ in found["regime_trader_update_stage_seconds_bucket"]}
    assert {"fetch", "model", "strategy", "checkpoint", "orders"} <= stages
    assert {labels["backend"] for labels, _ in found["regime_trader_backend_info"]} == {"numpy"}
    ages = {labels["account"]: v for labels, v in found["regime_trader_checkpoint_age_seconds"]}
    assert ages.keys() == {"beta"} and 0 <= ages["beta"] < 60, ages
    states = {labels["account"]: labels["state"]
              for labels, v in found["regime_trader_worker_state"] if v == 1}  # fmt: skip
    assert states == {"alpha": "parked", "beta": "running"}, states


def healthz_is_200_with_the_parked_account_listed_but_not_checked(
    url: str, daemon: DaemonProcess
) -> None:
    _, body = poll_until("/healthz 200", lambda: healthz(url), lambda r: r[0] == 200, 20,
                         daemon)  # fmt: skip
    assert (body["status"], body["failing"]) == ("ok", {})
    alpha, beta = body["accounts"]["alpha"], body["accounts"]["beta"]
    assert (alpha["state"], alpha["checked"]) == ("parked", False)
    assert alpha["reason"].startswith("parked")
    assert (beta["state"], beta["checked"], beta["ok"]) == ("running", True, True)


def healthz_turns_503_naming_a_stopped_worker_then_200_after_sigcont(
    url: str, served: dict[str, Any], daemon: DaemonProcess
) -> None:
    pid = account(served, "beta")["worker_pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        _, body = poll_until("/healthz 503 naming beta", lambda: healthz(url),
                             lambda r: r[0] == 503 and "beta" in r[1]["failing"], 30, daemon)
    finally:
        with suppress(ProcessLookupError):  # the supervisor may have replaced it by now
            os.kill(pid, signal.SIGCONT)
    assert body["status"] == "unhealthy" and body["failing"].keys() == {"beta"}, body
    assert body["accounts"]["beta"]["ok"] is False and body["reason"].startswith("beta: ")
    assert body["accounts"]["alpha"]["checked"] is False  # parked: still not failing
    poll_until("/healthz 200 after SIGCONT", lambda: healthz(url), lambda r: r[0] == 200, 60,
               daemon)  # fmt: skip


def status_after_the_daemon_stopped_says_stopped_and_what_each_account_was(
    stopped: Said, daemon: DaemonProcess
) -> None:
    doc = stopped.doc
    assert (doc["daemon"]["state"], doc["daemon"]["running"], doc["daemon"]["pid"]) == (
        "stopped", False, daemon.proc.pid)
    assert doc["daemon"]["stopped_at"] is not None
    alpha, beta = account(doc, "alpha"), account(doc, "beta")
    assert (alpha["state"], alpha["last_state"]) == ("not_running", "parked")
    assert alpha["reason"] is not None and alpha["cause"]["event"] == "state.unusable"
    assert (beta["state"], beta["last_state"], beta["health"]) == ("not_running", "stopped",
                                                                   "down")
    assert stopped.code == EXIT_NOT_HEALTHY
    assert stopped.text.startswith("daemon  stopped at ")


def status_live_asks_the_simulated_broker_which_agrees_with_the_checkpoint(
    live: Said, state: Path
) -> None:
    checkpoint = read_snapshot(state_path(state, "beta"))
    assert checkpoint is not None
    beta = account(live.doc, "beta")
    assert (beta["source"], beta["live_error"]) == ("broker", None)
    assert beta["equity"] == pytest.approx(checkpoint.equity, abs=0.01)
    assert account(live.doc, "alpha")["live_error"] is not None  # no update, no book
