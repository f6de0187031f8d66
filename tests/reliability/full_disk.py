"""The full-disk scenario, run inside `unshare --user --map-root-user --mount` (so the
test needs no root): on a tmpfs at MOUNTPOINT, trade one update (the database made and
its cold update written), shrink the tmpfs to what is used plus ROOM, trade on until the
disk is full, keep a copy of the state at that moment, make room (remount larger) and
trade on to the end. Writes OUT/result.json and the two copies of the state under OUT.

The disk is shrunk after the first update rather than mounted small: making a database
(its tables and migrations) writes more than many warm updates do, and the worker copies
the WAL back after each bar (service/state/wal_backfill.py), so the WAL stops growing:
a disk mounted small would fill at the start (exit 75, the database cannot be opened for
writing) or not at all. Here the second run's WAL and its index (32 KB) fill it within
its first updates; ROOM = 64 KiB fills it at a checkpoint's COMMIT or an outcome's, both
of which the test accepts (a much smaller ROOM fills it at the open, a much larger one
not within the test's 12 updates)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from service.bench.chaos import worker_process

PAGE = 4096


def _used(mountpoint: Path) -> int:
    stat = os.statvfs(mountpoint)
    return (stat.f_blocks - stat.f_bfree) * stat.f_frsize


def main(config: Path, mountpoint: Path, out: Path, room: int, stop_at: int) -> None:
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mountpoint)],
                   check=True)
    state = mountpoint / "state"
    state.mkdir()
    # The broker is remote: its book lives off the full disk (SQLite follows the link).
    (out / "broker").mkdir()
    (state / "alpha.sim-broker.sqlite").symlink_to(out / "broker" / "alpha.sim-broker.sqlite")
    first = worker_process(config, state, "alpha", 1, None)
    if first.returncode != 0:
        raise SystemExit(f"the first update failed: {first.stderr[-2000:]}")
    size = -(-(_used(mountpoint) + room) // PAGE) * PAGE
    subprocess.run(["mount", "-o", f"remount,size={size}", str(mountpoint)], check=True)
    full = worker_process(config, state, "alpha", stop_at, None)
    shutil.copytree(state, out / "at-full", symlinks=True)
    shutil.copytree(out / "broker", out / "broker-at-full")
    subprocess.run(["mount", "-o", "remount,size=64m", str(mountpoint)], check=True)
    again = worker_process(config, state, "alpha", stop_at, None)
    shutil.copytree(state, out / "final", symlinks=True)
    result = {"full_exit": full.returncode, "full_stderr": full.stderr[-4000:],
              "full_stdout": full.stdout[-4000:], "again_exit": again.returncode,
              "again_stderr": again.stderr[-4000:]}
    (out / "result.json").write_text(json.dumps(result))


if __name__ == "__main__":
    config, mountpoint, out, room, stop_at = sys.argv[1:]
    main(Path(config), Path(mountpoint), Path(out), int(room), int(stop_at))
