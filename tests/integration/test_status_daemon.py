"""`regime-trader status` asked about a real daemon: running, with one account parked (its
state database belongs to another account, so its worker exits 78), then stopped.

One daemon for the module: the fixture drives it through its life and keeps what status
said at each stage; the tests read those answers. Waits are on events (the daemon's log,
or status itself saying what the log already said), never on time.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from service.bench.daemon_harness import DaemonProcess, two_account_settings, write_config
from service.exit_codes import EX_CONFIG
from service.state.paths import state_path
from service.state.status_reads import read_snapshot
from service.state.store import StateStore
from service.status import EXIT_NOT_HEALTHY

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = two_account_settings(clock='mode = "paced"\npace_s = 0.5', window=32)
DEADLINE_S = 120.0  # generous for a loaded 2-core machine: every wait ends at its event


@dataclass
class Said:
    code: int
    doc: dict[str, Any]
    text: str


@dataclass
class Story:
    daemon_pid: int
    exit_code: int
    running: Said
    stopped: Said
    live: Said
    beta_checkpoint_equity: float


def status_json(config: Path, state: Path, *flags: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([*_status_args(config, state, *flags), "--json"], capture_output=True,
                          text=True, cwd=ROOT, timeout=60, check=False)
    return done.returncode, json.loads(done.stdout)


def status(config: Path, state: Path, *flags: str) -> Said:
    code, doc = status_json(config, state, *flags)
    text = subprocess.run(_status_args(config, state, *flags), capture_output=True, text=True,
                          cwd=ROOT, timeout=60, check=False)
    return Said(code, doc, text.stdout)


def status_until(config: Path, state: Path, shows: Callable[[dict[str, Any]], bool]) -> Said:
    """Ask until status reflects what the log already said (the runtime file is rewritten
    once a second), or the deadline passes; the tests then check every field."""
    deadline = time.monotonic() + DEADLINE_S
    while not shows(status_json(config, state)[1]) and time.monotonic() < deadline:
        pass
    return status(config, state)


def _status_args(config: Path, state: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "service.cli", "status", "--config", str(config),
            "--state-dir", str(state), *flags]


def account(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(a for a in doc["accounts"] if a["account"] == name)


def is_(name: str, who: str) -> Callable[[dict[str, Any]], bool]:
    return lambda e: e.get("event") == name and e.get("account") == who


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Story]:
    folder = tmp_path_factory.mktemp("status-daemon")
    config, state = write_config(folder / "config", SETTINGS), folder / "state"
    StateStore(state_path(state, "alpha"), account="beta").close()  # not alpha's: 78
    daemon = DaemonProcess(["run", "--config", str(config), "--state-dir", str(state)],
                           cwd=ROOT)
    try:
        daemon.wait_for(is_("account.parked", "alpha"), DEADLINE_S)
        daemon.wait_for(is_("update.completed", "beta"), DEADLINE_S)
        running = status_until(config, state, lambda d: account(d, "alpha")["state"] == "parked"
                               and account(d, "beta")["last_state"] == "running")
        daemon.signal(signal.SIGTERM)
        code = daemon.wait_exit(DEADLINE_S)
        stopped = status(config, state)
        live = status(config, state, "--live")
    finally:
        daemon.stop()
    beta = read_snapshot(state_path(state, "beta"))
    assert beta is not None
    yield Story(daemon.proc.pid, code, running, stopped, live, beta.equity)


def test_status_on_a_running_daemon_says_running_with_its_pid_and_each_workers_state(
    story: Story,
) -> None:
    doc = story.running.doc
    daemon = doc["daemon"]
    assert (daemon["state"], daemon["running"], daemon["pid"]) == (
        "running", True, story.daemon_pid)
    assert daemon["heartbeat_age_s"] < 10
    beta = account(doc, "beta")
    assert (beta["state"], beta["health"], beta["worker_pid"] is not None) == (
        "running", "ok", True)
    assert beta["equity"] is not None and beta["positions"] and beta["pnl"]["since_start"]
    assert f"daemon  running: pid {story.daemon_pid}" in story.running.text
    assert "beta  running" in story.running.text.splitlines()


def test_status_shows_a_parked_account_with_its_reason_and_cause(story: Story) -> None:
    alpha = account(story.running.doc, "alpha")
    assert (alpha["state"], alpha["health"]) == ("parked", "down")
    assert "78" in alpha["reason"]
    assert alpha["cause"]["event"] == "state.unusable" and "'beta'" in alpha["cause"]["reason"]
    assert story.running.code == EXIT_NOT_HEALTHY and story.running.doc["healthy"] is False
    assert any(line.startswith("alpha  parked:") for line in story.running.text.splitlines())


def test_status_after_the_daemon_stopped_says_stopped_and_what_each_account_was(
    story: Story,
) -> None:
    assert story.exit_code == EX_CONFIG  # an account parked for good: 78 at the end
    doc = story.stopped.doc
    assert (doc["daemon"]["state"], doc["daemon"]["running"], doc["daemon"]["pid"]) == (
        "stopped", False, story.daemon_pid)
    assert doc["daemon"]["stopped_at"] is not None
    alpha, beta = account(doc, "alpha"), account(doc, "beta")
    assert (alpha["state"], alpha["last_state"]) == ("not_running", "parked")
    assert alpha["reason"] is not None and alpha["cause"]["event"] == "state.unusable"
    assert (beta["state"], beta["last_state"], beta["health"]) == ("not_running", "stopped",
                                                                   "down")
    assert story.stopped.code == EXIT_NOT_HEALTHY
    assert story.stopped.text.startswith("daemon  stopped at ")


def test_status_live_asks_the_simulated_broker_which_agrees_with_the_checkpoint(
    story: Story,
) -> None:
    beta = account(story.live.doc, "beta")
    assert (beta["source"], beta["live_error"]) == ("broker", None)
    assert beta["equity"] == pytest.approx(story.beta_checkpoint_equity, abs=0.01)
    assert account(story.live.doc, "alpha")["live_error"] is not None  # no update, no book
