"""Storage faults: a full disk, a failed commit, a truncated or corrupted database, a
missing WAL file. Each ends in a clear error and a safe state: no order is ever sent
without a durable checkpoint, and a database that cannot be trusted is refused at start
(exit 78, the account parked), never silently reset."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from service.bench.chaos import chaos_settings, final_state, run_worker_process, worker_process
from service.bench.daemon_harness import LIGHT_EFFORT, DaemonProcess, write_config
from service.exit_codes import EX_CONFIG
from service.state.sqlite_open import open_sqlite

HERE = Path(__file__).resolve().parent
STOP = 12
# The update that first trades is read from the reference run, so any effort will do.
SETTINGS = chaos_settings(LIGHT_EFFORT)
EPOCH = re.compile(r"^rt-[0-9][0-9a-z]{5}-")


def _seq_of(cid: str) -> int:
    return int(cid.split("-")[-2])  # rt-<epoch>-<account>-<seq>-<symbol>


def _broker_ids(path: Path) -> set[str]:
    conn = open_sqlite(path, read_only=True)
    try:
        # with the epoch masked, as final_state shows them
        return {EPOCH.sub("rt-EPOCH-", str(r[0]))
                for r in conn.execute("SELECT client_order_id FROM orders")}
    finally:
        conn.close()


@pytest.fixture(scope="module")
def chaos_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_config(tmp_path_factory.mktemp("config"), SETTINGS)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, chaos_config: Path) -> dict[str, Any]:
    """alpha traded for STOP updates without interruption (read only by the tests)."""
    folder = tmp_path_factory.mktemp("reference")
    assert run_worker_process(chaos_config, folder, "alpha", STOP, None) == 0
    return final_state(folder, "alpha")


def _first_update_with_orders(state: dict[str, Any], after: int = 1) -> int:
    return min(_seq_of(cid) for cid, *_ in state["intents"] if _seq_of(cid) > after)


def test_a_failed_commit_sends_nothing_of_its_update_and_the_restart_resumes(
    tmp_path: Path, chaos_config: Path, reference: dict[str, Any]
) -> None:
    seq = _first_update_with_orders(reference)
    state = tmp_path / "state"

    failed = worker_process(chaos_config, state, "alpha", STOP, f"fail@in_commit:{seq}")

    assert failed.returncode == 1
    assert f"checkpoint {seq} was not committed" in failed.stderr
    assert "none of its orders was sent" in failed.stderr
    at_failure = final_state(state, "alpha")
    assert at_failure["seq"] == seq - 1
    assert all(_seq_of(cid) < seq for cid, *_ in at_failure["intents"])
    assert all(_seq_of(order[0]) < seq for order in at_failure["orders"])

    assert run_worker_process(chaos_config, state, "alpha", STOP, None) == 0
    assert final_state(state, "alpha") == reference


def test_a_full_disk_stops_the_worker_before_the_orders_of_the_update_it_could_not_commit(
    tmp_path: Path, chaos_config: Path, reference: dict[str, Any]
) -> None:
    """A tmpfs with 64 KiB left after the first update, mounted in a private user and
    mount namespace (no root needed; tests/reliability/full_disk.py).

    Which write meets the full disk depends on the bytes written before it (the model's
    state changes with the sampler): a checkpoint commit, and then nothing of that update
    was sent, or a later write, such as an order's outcome, after a durable checkpoint.
    Either way no order reaches the broker without its checkpoint, and with room again
    the worker trades on to the same end. (A failed commit at a chosen update is the
    test above.)"""
    mountpoint, out = tmp_path / "small-disk", tmp_path / "out"
    mountpoint.mkdir()
    out.mkdir()
    done = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", sys.executable,
         str(HERE / "full_disk.py"), str(chaos_config), str(mountpoint), str(out), "65536",
         str(STOP)],
        capture_output=True, text=True, timeout=240,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads((out / "result.json").read_text())

    assert result["full_exit"] == 1
    assert "database or disk is full" in result["full_stderr"]
    if "was not committed" in result["full_stderr"]:
        assert "none of its orders was sent" in result["full_stderr"]
    at_full = final_state(out / "at-full", "alpha")  # the local state when the disk filled
    assert at_full["seq"] < STOP
    sent = _broker_ids(out / "broker-at-full" / "alpha.sim-broker.sqlite")
    committed = {cid for cid, *_ in at_full["intents"]}
    assert sent <= committed, "an order reached the broker without a durable checkpoint"
    assert all(_seq_of(cid) <= at_full["seq"] for cid in sent)

    assert result["again_exit"] == 0, result["again_stderr"]  # room again: it trades on
    assert final_state(out / "final", "alpha") == reference


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _scribble(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[4096:8192] = b"\xa5" * 4096  # the second page: a b-tree page of the schema
    path.write_bytes(bytes(data))


def _bad_model(path: Path) -> None:
    """One bit of the newest model state flipped: the file itself stays valid SQLite."""
    conn = sqlite3.connect(path)
    seq, model = conn.execute("SELECT seq, model FROM checkpoints ORDER BY seq DESC").fetchone()
    flipped = bytearray(model)
    flipped[len(flipped) // 2] ^= 0x01
    conn.execute("UPDATE checkpoints SET model = ? WHERE seq = ?", (bytes(flipped), seq))
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    ("damage", "said"),
    [(_truncate, "move it aside"), (_scribble, "move it aside"),
     (_bad_model, "does not match its digest")],
    ids=["truncated", "scribbled", "model-blob"],
)
def test_a_damaged_database_parks_its_account_with_what_to_do_and_the_service_exits_78(
    fast_config: Path, tmp_path: Path, run_daemon: Callable[..., DaemonProcess],
    damage: Callable[[Path], None], said: str,
) -> None:
    state = tmp_path / "state"
    args = ["run", "--config", str(fast_config), "--state-dir", str(state)]
    first = run_daemon(*args, "--stop-after", "2")
    assert first.wait_exit() == 0, first.report("first run")
    damage(state / "alpha.sqlite")
    damaged = (state / "alpha.sqlite").read_bytes()

    daemon = run_daemon(*args)
    refused = daemon.wait_for(lambda e: e.get("event") == "state.unusable")
    parked = daemon.wait_for(lambda e: e.get("event") == "account.parked")
    daemon.wait_for(lambda e: e.get("event") == "update.completed"
                    and e.get("account") == "beta" and e.get("seq") == 3)
    daemon.signal(signal.SIGTERM)

    assert daemon.wait_exit() == EX_CONFIG
    assert refused["account"] == "alpha" and said in refused["reason"]
    assert str(state / "alpha.sqlite") in refused["reason"] or said == "does not match its digest"
    assert parked["account"] == "alpha" and parked["exit_code"] == EX_CONFIG
    assert "restore it or move it aside" in parked["reason"]
    assert not daemon.named("worker.restarted", account="alpha")
    assert (state / "alpha.sqlite").read_bytes() == damaged, "never reset silently"


def test_a_missing_wal_file_is_detected_from_the_broker_and_refused_with_78(
    tmp_path: Path, chaos_config: Path, reference: dict[str, Any]
) -> None:
    """Killed with a committed update still in the WAL (its orders sent, the WAL not yet
    copied back after the bar: service/state/wal_backfill.py); the -wal file then goes
    missing (a careless copy, a cleanup): the database falls back to an older state, but
    the broker holds orders of a later update, so the worker refuses to trade on it."""
    seq = _first_update_with_orders(reference, after=0)
    state = tmp_path / "state"
    # the run's first POST is update seq's (a batch broker's: one per update), its last
    assert run_worker_process(chaos_config, state, "alpha", STOP, "kill@after_post:1") == -9
    assert max(map(_seq_of, _broker_ids(state / "alpha.sim-broker.sqlite"))) == seq
    assert (state / "alpha.sqlite-wal").stat().st_size > 0
    (state / "alpha.sqlite-wal").unlink()

    refused = worker_process(chaos_config, state, "alpha", STOP, None)

    assert refused.returncode == EX_CONFIG, refused.stderr
    event = next(json.loads(line) for line in refused.stdout.splitlines()
                 if '"state.unusable"' in line)
    assert "lost committed updates" in event["reason"]
    assert "-wal" in event["reason"]

