"""A state directory the worker cannot write, made real inside `unshare --mount` (run as
root): a tmpfs that is full, mounted read-only, or made immutable (chattr +i, which root
cannot write through either). Runs one worker there; writes OUT/result.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from service.bench.chaos import worker_process
from service.state.store import StateStore


def _mount(mountpoint: Path, options: str) -> None:
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mountpoint)],
                   check=True)


def _fill(folder: Path) -> None:
    """Write until the disk says no more: the next write anywhere on it fails ENOSPC."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass  # ENOSPC: the disk is full, which is the point
    finally:
        os.close(fd)


def prepare(kind: str, mountpoint: Path) -> Path:
    _mount(mountpoint, "size=256k")
    state = mountpoint / "state"
    state.mkdir()
    if kind.endswith("-existing"):  # a database already there, from an earlier run
        StateStore(state / "alpha.sqlite").close()
    if kind.startswith("full"):
        _fill(mountpoint)
    elif kind.startswith("readonly"):
        subprocess.run(["mount", "-o", "remount,ro", str(mountpoint)], check=True)
    elif kind.startswith("immutable"):
        subprocess.run(["chattr", "+i", str(state)], check=True)
    return state


def main(kind: str, config: Path, mountpoint: Path, out: Path) -> None:
    state = prepare(kind, mountpoint)
    done = worker_process(config, state, "alpha", 2, None, timeout_s=240)
    if kind.startswith("immutable"):
        subprocess.run(["chattr", "-i", str(state)], check=True)
    result = {"exit": done.returncode, "stdout": done.stdout[-8000:],
              "stderr": done.stderr[-4000:], "state": str(state)}
    (out / "result.json").write_text(json.dumps(result))


if __name__ == "__main__":
    kind, config, mountpoint, out = sys.argv[1:]
    main(kind, Path(config), Path(mountpoint), Path(out))
