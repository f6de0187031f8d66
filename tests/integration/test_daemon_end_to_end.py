"""The daemon end to end: real processes, real signals, real SQLite, simulated market and
broker. Waits are on log events with deadlines, never sleeps."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

from conftest import DaemonProcess

from service.state.store import StateStore

UPDATE_FIELDS = {
    "seq",
    "bar_time",
    "instruments",
    "backend",
    "adapter",
    "numerics",
    "duration_ms",
    "timings_ms",
    "orders",
    "divergences",
    "behind_bars",
}


def checkpoints(state_dir: Path, account: str) -> list[int]:
    store = StateStore(state_dir / f"{account}.sqlite")
    try:
        return store.checkpoint_seqs()
    finally:
        store.close()


def test_stop_after_3_gives_three_updates_per_account_then_exits_0(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    daemon = run_daemon(
        "run", "--config", str(fast_config), "--state-dir", str(state), "--stop-after", "3"
    )
    assert daemon.wait_exit() == 0, daemon.report("bad exit")
    for account in ("alpha", "beta"):
        updates = daemon.named("update.completed", account=account)
        assert [u["seq"] for u in updates] == [1, 2, 3]
        for update in updates:
            assert update.keys() >= UPDATE_FIELDS
            assert update["backend"] == "numpy" and update["numerics"] == "float64"
            assert {"fetch", "model", "strategy", "checkpoint", "orders"} <= update[
                "timings_ms"
            ].keys()
        assert checkpoints(state, account) == [1, 2, 3]
    started = daemon.named("service.started")
    assert started and started[0]["accounts"] == ["alpha", "beta"]


def test_a_killed_worker_is_restarted_and_resumes_without_gap_or_repeat(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    daemon = run_daemon(
        "run", "--config", str(fast_config), "--state-dir", str(state), "--stop-after", "6"
    )
    update = daemon.wait_for(
        lambda e: (
            e.get("event") == "update.completed" and e.get("account") == "alpha" and e["seq"] == 2
        )
    )
    os.kill(update["pid"], signal.SIGKILL)
    exited = daemon.wait_for(
        lambda e: e.get("event") == "worker.exited" and e.get("account") == "alpha"
    )
    assert exited["signal"] == "SIGKILL"
    restarted = daemon.wait_for(
        lambda e: (
            e.get("event") == "worker.started"
            and e.get("account") == "alpha"
            and e["resumed_from_seq"] >= 2
        )
    )
    assert restarted["pid"] != update["pid"]
    assert daemon.wait_exit() == 0
    assert checkpoints(state, "alpha") == [1, 2, 3, 4, 5, 6]
    seqs = [u["seq"] for u in daemon.named("update.completed", account="alpha")]
    assert sorted(set(seqs)) == [1, 2, 3, 4, 5, 6]


def test_sigterm_stops_workers_after_their_update_and_exits_0(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    daemon = run_daemon("run", "--config", str(fast_config), "--state-dir", str(state))
    daemon.wait_for(lambda e: e.get("event") == "update.completed" and e["seq"] >= 2)
    daemon.signal(signal.SIGTERM)
    assert daemon.wait_exit() == 0
    assert daemon.named("service.stopped")
    for account in ("alpha", "beta"):
        last = max(u["seq"] for u in daemon.named("update.completed", account=account))
        assert checkpoints(state, account)[-1] == last


def test_same_seed_and_data_give_byte_identical_checkpoints(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path
) -> None:
    digests = []
    for name in ("first", "second"):
        state = tmp_path / name
        daemon = run_daemon(
            "run", "--config", str(fast_config), "--state-dir", str(state), "--stop-after", "3"
        )
        assert daemon.wait_exit() == 0
        store = StateStore(state / "alpha.sqlite")
        digests.append(store.model_digests())
        store.close()
    assert len(digests[0]) == 3 and digests[0] == digests[1]


def test_check_config_exits_78_with_the_reasons(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path
) -> None:
    fast_config.write_text(fast_config.read_text() + '\n[broker]\nkindd = "sim"\n')
    daemon = run_daemon("check-config", "--config", str(fast_config))
    assert daemon.wait_exit() == 78
    [rejected] = daemon.named("config.rejected")
    assert any("broker.kindd" in e and "unknown key" in e for e in rejected["errors"])


