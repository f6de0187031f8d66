"""Item 5: one daemon per state directory. The first holds `daemon.lock` for its life; a
second `run` on the same directory exits at once with 75, naming the holder's pid."""

from __future__ import annotations

import os
import select
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from service.bench.daemon_harness import DaemonProcess, two_account_settings
from service.exit_codes import EX_OK, EX_TEMPFAIL

SMALL_WINDOW = 32  # the least the settings accept


@pytest.fixture
def config(fast_config: Path) -> Path:
    """fast_config with the smallest model window: these tests prove the lock, not the
    model, and each waits through cold updates (a stopped or orphaned worker finishes the
    one in hand; the next daemon runs one)."""
    fast_config.write_text(two_account_settings(
        window=SMALL_WINDOW, sections="\n[supervision]\nbackoff_initial_s = 0.05\n"))
    return fast_config


def test_a_second_daemon_on_the_same_state_dir_is_refused_with_75_naming_the_holder(
    config: Path, tmp_path: Path, run_daemon: Callable[..., DaemonProcess]
) -> None:
    state = tmp_path / "state"
    args = ["run", "--config", str(config), "--state-dir", str(state)]
    first = run_daemon(*args)
    first.wait_for(lambda e: e.get("event") == "worker.started")
    holder = first.proc.pid
    assert (state / "daemon.lock").read_text().strip() == str(holder)

    second = run_daemon(*args)

    assert second.wait_exit() == EX_TEMPFAIL, second.report("second daemon")
    [locked] = second.named("service.state_dir_locked")
    assert locked["holder_pid"] == holder and locked["exit_code"] == EX_TEMPFAIL
    assert str(holder) in "".join(second.stderr) and str(state) in "".join(second.stderr)
    assert not second.named("worker.started"), "the second daemon started workers"
    assert first.proc.poll() is None, "the first daemon was disturbed"
    first.signal(signal.SIGTERM)
    assert first.wait_exit() == EX_OK

    third = run_daemon(*args, "--stop-after", "1")  # the lock went with its holder
    assert third.wait_exit() == EX_OK, third.report("after the holder stopped")


def test_a_lock_left_by_a_killed_daemon_does_not_block_the_next(
    config: Path, tmp_path: Path, run_daemon: Callable[..., DaemonProcess]
) -> None:
    state = tmp_path / "state"
    args = ["run", "--config", str(config), "--state-dir", str(state)]
    first = run_daemon(*args)
    workers = {first.wait_for(lambda e, a=a: e.get("event") == "worker.started"
                              and e.get("account") == a)["pid"] for a in ("alpha", "beta")}
    first.signal(signal.SIGKILL)
    first.wait_exit()
    assert (state / "daemon.lock").exists()
    for pid in workers:  # orphaned workers stop at the pipe's EOF: wait for each to go
        _wait_gone(pid)

    again = run_daemon(*args, "--stop-after", "1")
    assert again.wait_exit() == EX_OK, again.report("after a killed holder")


def _wait_gone(pid: int, timeout_s: float = 120.0) -> None:
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return  # already gone
    try:
        readable, _, _ = select.select([fd], [], [], timeout_s)
        assert readable, f"worker {pid} outlived its supervisor by {timeout_s} s"
    finally:
        os.close(fd)
