"""The daemon against the local Alpaca-compatible server: real processes, alpaca-py's real
HTTP code, faults at random, SIGKILL at the two dangerous points, and no key ever written.
Waits are on the daemon's exit with deadlines, never sleeps."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from alpaca_daemon import assert_exactly_once, key_env, write_config
from alpaca_server import AlpacaServer
from conftest import DaemonProcess

ROOT = Path(__file__).resolve().parent.parent.parent
CID = re.compile(r"^rt-alpha-(\d+)-(SPY|QQQ)$")
FAKE_KEY_ID, FAKE_SECRET = "PKFAKELEAKCHECK12345", "fake-secret-must-never-appear-0042"


@pytest.fixture
def server() -> Iterator[AlpacaServer]:
    server = AlpacaServer(stall_s=0.6, rate_limit=1_000_000).start()
    yield server
    server.stop()


def run(run_daemon: Callable[..., DaemonProcess], server: AlpacaServer, tmp_path: Path,
        updates: int, faults: str = "") -> DaemonProcess:
    config = write_config(tmp_path / "config", server)
    env = key_env(server)
    if faults:
        env |= {"REGIME_TRADER_FAULTS": faults, "REGIME_TRADER_TESTING": "1"}
    daemon = run_daemon("run", "--config", str(config), "--state-dir", str(tmp_path / "state"),
                        "--stop-after", str(updates), env=env)
    assert daemon.wait_exit(timeout=240) == 0, daemon.report("bad exit")
    return daemon


def signed_fills(server: AlpacaServer) -> Counter[str]:
    held: Counter[str] = Counter()
    for order in server.account.orders.values():
        if order.status == "filled":
            held[order.symbol] += order.filled_qty if order.side == "buy" else -order.filled_qty
    return held


def test_the_daemon_trades_end_to_end_against_the_local_server(
    run_daemon: Callable[..., DaemonProcess], server: AlpacaServer, tmp_path: Path
) -> None:
    daemon = run(run_daemon, server, tmp_path, updates=24)
    made = assert_exactly_once(server, tmp_path / "state")
    assert made, "the strategy placed no order in 24 updates"
    seqs = [int(m.group(1)) for cid, *_ in made if (m := CID.match(cid))]
    assert len(seqs) == len(made), "every client_order_id is rt-alpha-<seq>-<symbol>"
    assert {status for *_, status in made} <= {"filled", "accepted"}
    positions = {s: q for s, (q, _) in server.account.positions.items()}
    assert positions == {s: q for s, q in signed_fills(server).items() if q}
    assert [u["seq"] for u in daemon.named("update.completed")] == list(range(1, 25))


@pytest.mark.parametrize("updates", [40, pytest.param(240, marks=pytest.mark.slow)])
def test_under_random_faults_every_intent_is_accepted_exactly_once(
    run_daemon: Callable[..., DaemonProcess], server: AlpacaServer, tmp_path: Path,
    updates: int,
) -> None:
    server.faults.at_random(rate=0.1, seed=updates)
    daemon = run(run_daemon, server, tmp_path, updates=updates)
    made = assert_exactly_once(server, tmp_path / "state")
    assert made, "the strategy traded, so there were orders to protect"
    assert len(server.faults.injected) >= updates // 2
    assert not daemon.named("worker.exited", exit_code=None) and len(
        daemon.named("worker.started")) == 1, "the worker never crashed"
    explained = {e["event"] for e in daemon.events}
    assert "alpaca.retry" in explained, "the faults on reads are explained in the log"
    ambiguous = [k for route, k in server.faults.injected
                 if route == "POST /v2/orders" and k not in ("429", "422")]
    if ambiguous:  # which POSTs a random fault hits depends on what the strategy trades
        assert "order.unknown" in explained, f"ambiguous POST answers {ambiguous} unexplained"
    kinds = {kind for _, kind in server.faults.injected}
    assert len(kinds) >= 8, f"too few kinds of fault injected: {kinds}"


@pytest.mark.parametrize("point", ["after_checkpoint", "after_post"])
def test_sigkill_at_the_dangerous_points_neither_duplicates_nor_loses_an_order(
    run_daemon: Callable[..., DaemonProcess], server: AlpacaServer, tmp_path: Path, point: str
) -> None:
    daemon = run(run_daemon, server, tmp_path, updates=24, faults=f"kill@{point}:1#alpha")
    kills = [e for e in daemon.named("worker.exited") if e.get("signal") == "SIGKILL"]
    assert kills, daemon.report("the fault point never fired")
    made = assert_exactly_once(server, tmp_path / "state")
    assert {status for *_, status in made} <= {"filled", "accepted", "rejected"}
    resumed = [e for e in daemon.named("worker.started") if e["resumed_from_seq"] > 0]
    assert len(resumed) == len(kills)


def test_no_key_is_ever_written_to_logs_databases_or_status(
    run_daemon: Callable[..., DaemonProcess], tmp_path: Path
) -> None:
    server = AlpacaServer(key_id=FAKE_KEY_ID, secret=FAKE_SECRET, stall_s=0.6,
                         rate_limit=1_000_000).start()
    try:
        server.faults.at_random(rate=0.15, seed=3)
        daemon = run(run_daemon, server, tmp_path, updates=12)
    finally:
        server.stop()
    status = subprocess.run(
        [sys.executable, "-m", "service.cli", "status", "--json", "--config",
         str(tmp_path / "config" / "service.toml"), "--state-dir", str(tmp_path / "state")],
        cwd=ROOT, capture_output=True, check=False, timeout=60,
    )
    written = [status.stdout, status.stderr, "".join(daemon.stderr).encode()]
    written += [repr(e).encode() for e in daemon.events]
    written += [p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file()]
    for blob in written:
        assert FAKE_KEY_ID.encode() not in blob and FAKE_SECRET.encode() not in blob
    assert daemon.named("update.completed") and status.stdout
