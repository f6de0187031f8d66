"""Supervision with real processes and real signals: restarts, hangs, crash loops,
parking, the global budget, graceful stops, and no orphans."""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
from conftest import DaemonProcess, Event

from service.bench.daemon_harness import two_account_settings

SUPERVISION = """
[supervision]
heartbeat_s = 0.2
missed_heartbeats = 3
update_budget_s = 2.0
shutdown_budget_s = 1.0
backoff_initial_s = 0.05
restart_intensity = 3
restart_period_s = 30.0
park_cooldown_s = 0.3
global_intensity = 5
global_period_s = 60.0
"""

TESTING = {"REGIME_TRADER_TESTING": "1"}
SMALL_WINDOW = 32  # the least the settings accept


@pytest.fixture
def config(fast_config: Path) -> Path:
    """fast_config with the smallest model window: these tests prove supervision, not the
    model, and a small window shortens every update they wait through."""
    fast_config.write_text(two_account_settings(window=SMALL_WINDOW, sections=SUPERVISION))
    return fast_config


def when(event: Event) -> datetime:
    return datetime.fromisoformat(event["timestamp"])


def is_(name: str, account: str | None = None, **fields: object) -> Callable[[Event], bool]:
    def match(e: Event) -> bool:
        return (
            e.get("event") == name
            and (account is None or e.get("account") == account)
            and all(e.get(k) == v for k, v in fields.items())
        )

    return match


def wait_gone(pids: list[int], timeout: float) -> list[int]:
    """Wait on each process's exit itself (pidfd); return those still running."""
    alive = []
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            if not select.select([fd], [], [], timeout)[0]:
                alive.append(pid)
        finally:
            os.close(fd)
    return alive


def test_a_killed_worker_is_back_within_2s_and_the_other_account_never_pauses(
    run_daemon: Callable[..., DaemonProcess], config: Path, tmp_path: Path
) -> None:
    daemon = run_daemon("run", "--config", str(config), "--state-dir", str(tmp_path / "s"))
    victim = daemon.wait_for(is_("update.completed", "alpha", seq=2))
    os.kill(victim["pid"], signal.SIGKILL)
    exited = daemon.wait_for(is_("worker.exited", "alpha"))
    restarted = daemon.wait_for(is_("worker.restarted", "alpha"))
    assert exited["signal"] == "SIGKILL" and restarted["restarts"] == 1
    assert (when(restarted) - when(exited)).total_seconds() < 2.0
    back = daemon.wait_for(
        lambda e: is_("update.completed", "alpha")(e) and e["pid"] != victim["pid"]
    )
    beta_meanwhile = [
        e
        for e in daemon.named("update.completed", account="beta")
        if when(exited) < when(e) < when(back)
    ]
    assert beta_meanwhile, "beta kept updating while alpha was being replaced"
    daemon.signal(signal.SIGTERM)
    assert daemon.wait_exit() == 0


def test_a_hung_worker_reports_its_true_silence_logs_its_stacks_and_is_killed_and_replaced(
    run_daemon: Callable[..., DaemonProcess], config: Path, tmp_path: Path
) -> None:
    """One hang proves the whole escalation. The hang comes after a heartbeat that allowed
    update_budget_s (2.0): the silence `worker.hung` reports is at least that allowance plus
    the missed heartbeats (0.6), and no more than the time since alpha's last update. The
    hung worker dumps its stacks on stderr, which reach the log; it is SIGKILLed, and
    worker.exited names the signal and carries its last stderr lines; a new worker
    replaces it, and beta never hangs."""
    env = {**TESTING, "REGIME_TRADER_FAULTS": "hang@update:3#alpha"}
    daemon = run_daemon("run", "--config", str(config), "--state-dir", str(tmp_path / "s"), env=env)
    hung = daemon.wait_for(is_("worker.hung", "alpha"), timeout=60)
    last_update = daemon.named("update.completed", account="alpha", pid=hung["pid"])[-1]
    assert hung["silent_s"] >= 2.0 + 3 * 0.2
    assert hung["silent_s"] <= (when(hung) - when(last_update)).total_seconds() + 0.01
    stack = daemon.wait_for(
        lambda e: is_("worker.stderr", "alpha")(e) and "fault_points.py" in e["line"]
    )
    assert stack["account"] == "alpha"
    exited = daemon.wait_for(is_("worker.exited", "alpha"), timeout=60)
    assert exited["signal"] == "SIGKILL" and "SIGKILL" in exited["reason"]
    assert any("fault_points.py" in line for line in exited["stderr_tail"])
    assert len(exited["stderr_tail"]) <= 20
    daemon.wait_for(is_("worker.restarted", "alpha"))
    daemon.wait_for(lambda e: is_("worker.started", "alpha")(e) and e["pid"] != hung["pid"])
    assert not daemon.named("worker.hung", account="beta")
    daemon.signal(signal.SIGTERM)
    assert daemon.wait_exit() == 0


def sigterm_pending(pid: int) -> bool:
    """Whether SIGTERM waits in the process's pending set (/proc: a stopped process does not
    act on it until it is continued)."""
    with open(f"/proc/{pid}/status") as status:
        fields = dict(line.split(":", 1) for line in status if ":" in line)
    pending = int(fields["ShdPnd"], 16) | int(fields["SigPnd"], 16)
    return bool(pending & (1 << (signal.SIGTERM - 1)))


def test_a_hung_worker_that_wakes_to_honour_its_sigterm_is_replaced_not_finished(
    run_daemon: Callable[..., DaemonProcess], config: Path, tmp_path: Path
) -> None:
    """A worker stopped (SIGSTOP) long enough to be taken for hung gets the escalation's
    SIGTERM while stopped; continued, it honours it and exits 0. Its account is not
    finished for that: the supervisor replaces it (it once took the 0 for a clean end,
    and a daemon of one trading account stopped). Waits on the SIGTERM itself being
    pending (/proc), not on a time."""
    daemon = run_daemon("run", "--config", str(config), "--state-dir", str(tmp_path / "s"))
    victim = daemon.wait_for(is_("update.completed", "alpha", seq=2))["pid"]
    os.kill(victim, signal.SIGSTOP)
    try:
        daemon.wait_for(is_("worker.hung", "alpha", pid=victim), timeout=60)
        deadline = time.monotonic() + 30
        while not sigterm_pending(victim):
            assert time.monotonic() < deadline, "no SIGTERM after worker.hung"
            select.select([], [], [], 0.05)  # the poll's period on /proc, not a wait for time
    finally:
        os.kill(victim, signal.SIGCONT)
    exited = daemon.wait_for(is_("worker.exited", "alpha"), timeout=60)
    assert exited.get("exit_code") == 0 or exited.get("signal") == "SIGKILL"
    assert exited["reason"].startswith("stopped as hung")
    daemon.wait_for(is_("worker.restarted", "alpha"), timeout=60)
    daemon.wait_for(lambda e: is_("update.completed", "alpha")(e) and e["pid"] != victim)
    daemon.signal(signal.SIGTERM)
    assert daemon.wait_exit() == 0


def test_a_crash_loop_backs_off_parks_the_account_and_past_the_global_budget_exits_70(
    run_daemon: Callable[..., DaemonProcess], config: Path, tmp_path: Path
) -> None:
    state = tmp_path / "s"
    state.mkdir()
    crash = {**TESTING, "REGIME_TRADER_FAULTS": "exit@start#beta"}
    daemon = run_daemon("run", "--config", str(config), "--state-dir", str(state), env=crash)
    assert daemon.wait_exit() == 70, daemon.report("expected the global budget to run out")
    backoffs = [
        e["backoff_s"] for e in daemon.named("worker.exited", account="beta") if "backoff_s" in e
    ]
    assert backoffs[:3] == [0.05, 0.1, 0.2]
    [parked] = daemon.named("account.parked", account="beta")
    alpha_after_park = [
        e for e in daemon.named("update.completed", account="alpha") if when(e) > when(parked)
    ]
    assert alpha_after_park, "alpha kept trading while beta was parked"
    assert {e["exit_code"] for e in daemon.named("worker.exited", account="beta")} == {99}
    assert daemon.named("service.stopped", exit_code=70)


def test_sigterm_mid_update_finishes_it_checkpoints_and_leaves_no_process(
    run_daemon: Callable[..., DaemonProcess], config: Path, tmp_path: Path
) -> None:
    # A shutdown budget no loaded machine can overrun: the update must finish, not be cut.
    config.write_text(config.read_text().replace("shutdown_budget_s = 1.0",
                                                 "shutdown_budget_s = 120.0"))
    daemon = run_daemon("run", "--config", str(config), "--state-dir", str(tmp_path / "s"))
    daemon.wait_for(is_("update.completed", "beta", seq=2))
    workers = [e["pid"] for e in daemon.named("worker.started")]
    daemon.signal(signal.SIGTERM)  # the fast clock starts the next update at once
    assert daemon.wait_exit(timeout=240) == 0
    stopping = daemon.named("worker.stopping")
    assert {e["reason"] for e in stopping} == {"stop requested"}, daemon.report("no stop")
    assert wait_gone(workers, timeout=5.0) == []


def test_workers_exit_when_the_supervisor_is_killed(
    run_daemon: Callable[..., DaemonProcess], config: Path, tmp_path: Path
) -> None:
    daemon = run_daemon("run", "--config", str(config), "--state-dir", str(tmp_path / "s"))
    daemon.wait_for(is_("update.completed", "alpha", seq=1))
    daemon.wait_for(is_("update.completed", "beta", seq=1))
    workers = [e["pid"] for e in daemon.named("worker.started")]
    daemon.signal(signal.SIGKILL)
    assert wait_gone(workers, timeout=30.0) == []


def test_faults_are_refused_outside_a_test_run(
    run_daemon: Callable[..., DaemonProcess], config: Path, tmp_path: Path
) -> None:
    daemon = run_daemon(
        "run",
        "--config",
        str(config),
        "--state-dir",
        str(tmp_path / "s"),
        env={"REGIME_TRADER_FAULTS": "kill@update"},
    )
    assert daemon.wait_exit() == 78
    [rejected] = daemon.named("config.rejected")
    assert "REGIME_TRADER_TESTING" in rejected["errors"][0]


def test_a_worker_that_fails_at_start_says_why_and_the_supervisor_logs_the_reason(
    run_daemon: Callable[..., DaemonProcess], config: Path, tmp_path: Path
) -> None:
    """Every incarnation of beta fails as it starts: each says why, and so does each exit,
    until the global budget runs out."""
    env = {**TESTING, "REGIME_TRADER_FAULTS": "fail@start#beta"}
    daemon = run_daemon("run", "--config", str(config), "--state-dir", str(tmp_path / "s"), env=env)
    assert daemon.wait_exit() == 70
    failures = daemon.named("worker.failed", account="beta")
    exits = daemon.named("worker.exited", account="beta")
    assert len(failures) == len(exits) >= 2
    assert {(e["error_type"], e["exit_code"]) for e in failures} == {("InjectedFailure", 70)}
    assert all("injected at start" in e["error"] for e in failures)
    assert {e["exit_code"] for e in exits} == {70}
    assert all("gave up" in e["reason"] and isinstance(e["stderr_tail"], list) for e in exits)
