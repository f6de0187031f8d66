"""The full-disk scenario, run inside `unshare --user --map-root-user --mount` (so the
test needs no root): mount a tmpfs of SIZE at MOUNTPOINT, trade there until the disk is
full, keep a copy of the state at that moment, make room (remount larger) and trade on to
the end. Writes OUT/result.json and the two copies of the state under OUT."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from service.bench.chaos import worker_process


def main(config: Path, mountpoint: Path, out: Path, size: str, stop_at: int) -> None:
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mountpoint)],
                   check=True)
    state = mountpoint / "state"
    state.mkdir()
    # The broker is remote: its book lives off the full disk (SQLite follows the link).
    (out / "broker").mkdir()
    (state / "alpha.sim-broker.sqlite").symlink_to(out / "broker" / "alpha.sim-broker.sqlite")
    full = worker_process(config, state, "alpha", stop_at, None)
    shutil.copytree(state, out / "at-full", symlinks=True)
    shutil.copytree(out / "broker", out / "broker-at-full")
    subprocess.run(["mount", "-o", "remount,size=64m", str(mountpoint)], check=True)
    again = worker_process(config, state, "alpha", stop_at, None)
    shutil.copytree(state, out / "final", symlinks=True)
    result = {"full_exit": full.returncode, "full_stderr": full.stderr[-4000:],
              "again_exit": again.returncode, "again_stderr": again.stderr[-4000:]}
    (out / "result.json").write_text(json.dumps(result))


if __name__ == "__main__":
    config, mountpoint, out, size, stop_at = sys.argv[1:]
    main(Path(config), Path(mountpoint), Path(out), size, int(stop_at))
