"""An instrument added live to a running daemon warms up off the critical path: the
account's warm updates keep coming, without it, between `model.warming` and
`model.ready` (shown by the order of events, never by timing); a worker killed while
warming starts the warm-up again and loses no update."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

from conftest import FAST_INSTRUMENTS, FAST_SETTINGS, DaemonProcess, Event

SETTINGS = FAST_SETTINGS.replace("window = 128\nchains = 4", "window = 32\nchains = 2")
WITH_DIA = FAST_INSTRUMENTS.replace('"IWM"]', '"IWM", "DIA"]')
DEADLINE_S = 300.0  # generous, for a loaded 2-core machine: each wait ends at its event


def alpha(event: str, **fields: object) -> Callable[[Event], bool]:
    return lambda e: (e.get("event") == event and e.get("account") == "alpha"
                      and all(e.get(k) == v for k, v in fields.items()))


def start(run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path,
          env: dict[str, str] | None = None) -> DaemonProcess:
    fast_config.write_text(SETTINGS)
    daemon = run_daemon("run", "--config", str(fast_config), "--state-dir",
                        str(tmp_path / "s"), env=env)
    daemon.wait_for(alpha("update.completed"), timeout=DEADLINE_S)
    fast_config.with_name("instruments.toml").write_text(WITH_DIA)
    daemon.signal(signal.SIGHUP)
    return daemon


def alpha_events(daemon: DaemonProcess) -> list[Event]:
    return [e for e in daemon.events if e.get("account") == "alpha"]


def test_a_live_add_does_not_delay_the_warm_updates(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path
) -> None:
    daemon = start(run_daemon, fast_config, tmp_path)
    ready = daemon.wait_for(alpha("model.ready", symbol="DIA"), timeout=DEADLINE_S)
    daemon.wait_for(alpha("update.completed", seq=ready["adopted_at_seq"]), timeout=DEADLINE_S)
    daemon.signal(signal.SIGTERM)
    assert daemon.wait_exit() == 0

    events = alpha_events(daemon)
    [warming] = [e for e in events if e["event"] == "model.warming"]
    assert (warming["symbol"], warming["reason"]) == ("DIA", "added live")
    between = events[events.index(warming): events.index(ready)]
    updates = [e for e in between if e["event"] == "update.completed"]
    assert updates, "the update that handed DIA off completes before DIA is ready"
    assert all(e["modelled"] == 3 and "DIA" in e["warming"] for e in updates)
    assert updates[0]["seq"] == ready["handed_off_at_seq"]
    adopted = next(e for e in events[events.index(ready):] if e["event"] == "update.completed")
    assert adopted["seq"] == ready["adopted_at_seq"] and adopted["modelled"] == 4
    seqs = [e["seq"] for e in events if e["event"] == "update.completed"]
    assert seqs == list(range(1, len(seqs) + 1)), "every update, in order, none lost"


def test_a_worker_killed_while_warming_starts_the_warm_up_again_and_loses_no_update(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path
) -> None:
    """`pause@warming` holds every warm-up of alpha (not its loop): the kill lands while
    one is in flight, by construction, and the warm updates go on meanwhile."""
    env = {"REGIME_TRADER_TESTING": "1", "REGIME_TRADER_FAULTS": "pause@warming#alpha"}
    daemon = start(run_daemon, fast_config, tmp_path, env)
    held = daemon.wait_for(alpha("fault.paused", point="warming"), timeout=DEADLINE_S)
    warming = daemon.wait_for(alpha("model.warming", symbol="DIA"), timeout=DEADLINE_S)
    handed = daemon.wait_for(lambda e: alpha("update.completed", pid=held["pid"])(e)
                             and daemon.events.index(e) > daemon.events.index(warming),
                             timeout=DEADLINE_S)
    # the warm-up is held, yet the next update comes: it was never waiting on it
    went_on = daemon.wait_for(alpha("update.completed", pid=held["pid"], seq=handed["seq"] + 1),
                              timeout=DEADLINE_S)
    os.kill(held["pid"], signal.SIGKILL)
    again = daemon.wait_for(lambda e: alpha("model.warming", symbol="DIA")(e)
                            and e["pid"] != held["pid"], timeout=DEADLINE_S)
    after = daemon.wait_for(lambda e: alpha("update.completed")(e)
                            and e["pid"] == again["pid"], timeout=DEADLINE_S)
    daemon.signal(signal.SIGTERM)
    assert daemon.wait_exit() == 0

    assert again["reason"] == "no checkpoint" and "DIA" in after["warming"]
    assert "DIA" in went_on["warming"] and went_on["modelled"] == 3
    assert not [e for e in alpha_events(daemon) if e["event"] == "model.ready"]
    seqs = sorted({e["seq"] for e in alpha_events(daemon) if e["event"] == "update.completed"})
    assert seqs == list(range(1, seqs[-1] + 1)), "no update lost across the restart"
