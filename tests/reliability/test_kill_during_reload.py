"""A worker killed while it takes a new configuration (the `reload` fault point, which
only a supervisor passes: the chaos run drives workers on their own)."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

from service.bench.daemon_harness import DaemonProcess


def test_a_worker_killed_while_it_takes_a_new_configuration_comes_back_on_the_new_one(
    fast_config: Path, tmp_path: Path, run_daemon: Callable[..., DaemonProcess]
) -> None:
    """The `reload` fault point, through the real supervisor: SIGKILL mid-reload, the
    replacement resumes from the last checkpoint with the new instruments file."""
    daemon = run_daemon("run", "--config", str(fast_config), "--state-dir", str(tmp_path / "s"),
                        env={"REGIME_TRADER_TESTING": "1",
                             "REGIME_TRADER_FAULTS": "kill@reload:1#alpha"})
    first = daemon.wait_for(lambda e: e.get("event") == "update.completed"
                            and e.get("account") == "alpha")
    instruments = fast_config.with_name("instruments.toml")
    instruments.write_text(instruments.read_text().replace('"IWM"]', '"IWM", "DIA"]'))
    daemon.signal(signal.SIGHUP)

    exited = daemon.wait_for(lambda e: e.get("event") == "worker.exited"
                             and e.get("account") == "alpha")
    after = daemon.wait_for(lambda e: e.get("event") == "update.completed"
                            and e.get("account") == "alpha" and e.get("pid") != first["pid"])
    daemon.signal(signal.SIGTERM)

    assert exited["signal"] == "SIGKILL"
    assert after["instruments"] == 4
    assert daemon.wait_exit() == 0
