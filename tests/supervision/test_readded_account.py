"""An account whose instruments are all removed retires; added back, it trades again.
Real daemon, real edits of the instruments file, `status` run as the operator would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from conftest import FAST_INSTRUMENTS, DaemonProcess, Event

ROOT = Path(__file__).resolve().parent.parent.parent
ALPHA_ONLY = FAST_INSTRUMENTS[: FAST_INSTRUMENTS.index("[accounts.beta]")]


def is_(name: str, account: str) -> Callable[[Event], bool]:
    return lambda e: e.get("event") == name and e.get("account") == account


def write_renamed(path: Path, text: str) -> None:
    """An atomic save, as editors make it: write a sibling, rename it over the file."""
    temporary = path.with_name(path.name + ".new")
    temporary.write_text(text)
    os.replace(temporary, path)


def health(config: Path, state: Path) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "status", "--config", str(config),
         "--state-dir", str(state), "--json"],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )
    return {a["account"]: a["health"] for a in json.loads(done.stdout)["accounts"]}


def test_a_removed_then_re_added_account_gets_a_new_worker_and_status_follows(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path
) -> None:
    state, instruments = tmp_path / "s", fast_config.with_name("instruments.toml")
    daemon = run_daemon("run", "--config", str(fast_config), "--state-dir", str(state))
    first = daemon.wait_for(is_("update.completed", "beta"))

    write_renamed(instruments, ALPHA_ONLY)
    exited = daemon.wait_for(is_("worker.exited", "beta"))
    assert exited["exit_code"] == 0
    assert health(fast_config, state)["beta"] == "retired"

    write_renamed(instruments, FAST_INSTRUMENTS)
    back = daemon.wait_for(lambda e: is_("update.completed", "beta")(e)
                           and e["pid"] != first["pid"])
    assert back["seq"] > first["seq"]
    assert health(fast_config, state)["beta"] == "ok"
    daemon.signal(signal.SIGTERM)
    assert daemon.wait_exit() == 0
