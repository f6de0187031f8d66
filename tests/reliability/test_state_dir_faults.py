"""Item 12: a state directory that cannot be written (disk full, read-only, permission
denied) is a temporary failure: the worker exits 75 with the real cause (errno and path)
and the supervisor restarts it with backoff. Only a database that cannot be trusted is 78.

Every fault is real: a full or read-only tmpfs and an immutable directory inside a private
mount namespace, and a worker that runs as `nobody` for a plain permission denial (we run
as root, which no mode bit stops)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from service.bench.chaos import chaos_settings
from service.bench.daemon_harness import LIGHT_EFFORT, DaemonProcess, write_config
from service.exit_codes import EX_CONFIG, EX_OK, EX_TEMPFAIL

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
NOBODY = 65534


def _unavailable(stdout: str) -> dict[str, Any]:
    return next(json.loads(line) for line in stdout.splitlines()
                if '"state.unavailable"' in line)


@pytest.mark.parametrize(
    ("kind", "errno_name"),
    [("full", "ENOSPC"), ("full-existing", "ENOSPC"), ("readonly", "EROFS"),
     ("readonly-existing", "EROFS"), ("immutable", "EPERM"), ("immutable-existing", "EPERM")],
)
def test_an_unwritable_state_dir_exits_75_with_the_errno_and_the_path(
    tmp_path: Path, kind: str, errno_name: str
) -> None:
    config = write_config(tmp_path / "config", chaos_settings(LIGHT_EFFORT))
    mountpoint, out = tmp_path / "disk", tmp_path / "out"
    mountpoint.mkdir()
    out.mkdir()
    done = subprocess.run(
        ["unshare", "--mount", sys.executable, str(HERE / "unwritable_state.py"), kind,
         str(config), str(mountpoint), str(out)],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads((out / "result.json").read_text())

    assert result["exit"] == EX_TEMPFAIL, result["stderr"]
    event = _unavailable(result["stdout"])
    assert event["errno"] == errno_name, event
    assert result["state"] in event["reason"] and errno_name in event["reason"]
    assert event["exit_code"] == EX_TEMPFAIL
    assert '"state.unusable"' not in result["stdout"], "reported as a corrupt database"


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder `nobody` can reach (pytest's own tmp folders are private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="rt-denied-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def test_a_state_dir_the_worker_may_not_write_exits_75_with_eacces(open_folder: Path) -> None:
    config = write_config(open_folder / "config", chaos_settings(LIGHT_EFFORT))
    for path in [open_folder / "config", *(open_folder / "config").iterdir()]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    state = open_folder / "state"
    state.mkdir(mode=0o755)  # root's: nobody may not create files in it
    done = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
         sys.executable, "-m", "service.bench.chaos", "worker", str(config), str(state), "alpha",
         "2"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
        env={**os.environ, "HOME": str(open_folder)},
    )
    assert done.returncode == EX_TEMPFAIL, done.stderr
    event = _unavailable(done.stdout)
    assert event["errno"] == "EACCES" and str(state) in event["reason"]


@pytest.fixture
def immutable() -> Iterator[list[Path]]:
    """Files made immutable by a test; made mutable again whatever happens."""
    made: list[Path] = []
    yield made
    for path in made:
        subprocess.run(["chattr", "-i", str(path)], check=False)


def test_the_supervisor_restarts_a_worker_that_exits_75_and_it_recovers(
    fast_config: Path, tmp_path: Path, run_daemon: Callable[..., DaemonProcess],
    immutable: list[Path],
) -> None:
    state = tmp_path / "state"
    args = ["run", "--config", str(fast_config), "--state-dir", str(state)]
    assert run_daemon(*args, "--stop-after", "1").wait_exit() == EX_OK
    database = state / "alpha.sqlite"
    subprocess.run(["chattr", "+i", str(database)], check=True)
    immutable.append(database)

    daemon = run_daemon(*args)
    for restarts in (0, 1):  # two failed starts, each followed by a restart
        daemon.wait_for(lambda e, r=restarts: e.get("event") == "worker.exited"
                        and e.get("account") == "alpha" and e.get("restarts") == r
                        and e.get("exit_code") == EX_TEMPFAIL)
    subprocess.run(["chattr", "-i", str(database)], check=True)
    daemon.wait_for(lambda e: e.get("event") == "update.completed"
                    and e.get("account") == "alpha")
    daemon.signal(signal.SIGTERM)

    assert daemon.wait_exit() == EX_OK, daemon.report("after recovery")
    assert not daemon.named("account.parked"), "a temporary failure parked the account"
    assert all(e.get("exit_code") != EX_CONFIG for e in daemon.named("worker.exited"))
