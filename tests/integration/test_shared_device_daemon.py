"""`[model] shared_device`: the supervisor starts one device process before the workers,
the workers' warm updates run there, and when it dies the workers trade on with their own
devices until the supervisor has started it again and they are back on it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from conftest import DaemonProcess

DEADLINE_S = 240.0  # llvmpipe compiles each process's kernels: seconds, more when loaded


def _served(event: dict, account: str, after: int = 0) -> bool:  # type: ignore[type-arg]
    """A warm update of `account`, past seq `after`, that ran on the shared device."""
    completed = event.get("event") == "update.completed" and event.get("account") == account
    return completed and event.get("seq", 0) > after and "device_wait" in event.get("model", {})


def test_warm_updates_run_on_the_shared_device_which_is_restarted_when_it_dies(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path
) -> None:
    fast_config.write_text(
        fast_config.read_text()
        .replace("window = 128", "window = 64")  # llvmpipe runs the wgpu side: keep it small
        .replace('backend = "numpy"', 'backend = "wgpu"\nshared_device = true')
    )
    (fast_config.parent / "instruments.toml").write_text(
        '[accounts.alpha]\nsymbols = ["SPY"]\n\n[accounts.beta]\nsymbols = ["QQQ"]\n'
    )
    daemon = run_daemon("run", "--config", str(fast_config), "--state-dir", str(tmp_path / "s"))
    first = daemon.wait_for(lambda e: e.get("event") == "device.started", DEADLINE_S)
    for account in ("alpha", "beta"):
        served = daemon.wait_for(lambda e, a=account: _served(e, a), DEADLINE_S)
        # its device traffic is the device process's run: a submission, the bytes it sent
        assert served["device"]["submissions"] >= 1 and served["device"]["upload_bytes"] > 0
    assert {e["account"] for e in daemon.named("device.shared_connected")} == {"alpha", "beta"}

    os.kill(first["pid"], signal.SIGKILL)
    daemon.wait_for(lambda e: e.get("event") == "device.exited", DEADLINE_S)
    lost = daemon.wait_for(lambda e: e.get("event") == "device.shared_lost", DEADLINE_S)
    again = daemon.wait_for(lambda e: e.get("event") == "device.started" and e["starts"] == 2,
                            DEADLINE_S)  # fmt: skip
    assert again["pid"] != first["pid"]
    # the worker that lost it trades on, then is served again by the new process
    account = lost["account"]
    last = max(e["seq"] for e in daemon.named("update.completed", account=account))
    daemon.wait_for(lambda e: _served(e, account, after=last), DEADLINE_S)
    status = subprocess.run(
        [sys.executable, "-m", "service.cli", "status", "--json", "--config", str(fast_config),
         "--state-dir", str(tmp_path / "s")],
        capture_output=True, check=True, timeout=DEADLINE_S, text=True,
    )  # fmt: skip
    device = json.loads(status.stdout)["daemon"]["device"]
    assert device["state"] == "running" and device["starts"] == 2

    daemon.signal(signal.SIGTERM)
    assert daemon.wait_exit(DEADLINE_S) == 0, daemon.report("bad exit")
    assert daemon.named("device.stopped"), daemon.report("the device process did not stop")
