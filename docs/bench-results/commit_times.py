# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Each COMMIT of an update, by its place in the update (thirty-seventh session, issue
14 item 4): `python docs/bench-results/commit_times.py MODE [N]` runs the stages bench's
rig (N instruments, default 268) for 20 updates and prints, for updates 5 to 20, the
median ms of each statement that begins, commits or changes a transaction, numbered by
the COMMITs before it in the update and the copy after it (0: the reconcile stage's
record of outcomes, 1: the checkpoint, 2: the orders' outcomes, 3 and on: the copy's).
MODE `copy`: as the tree does after each bar; `none`: the copy after the bar left out.
Then the checkpoint's COMMIT (place 1) of every update, 1 to 20, in order: without the
copy, SQLite's own copy inside a COMMIT shows as one long one."""

import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from service.bench import stages

TIMES: dict[tuple[int, str], list[float]] = defaultdict(list)
KINDS = ("COMMIT", "BEGIN", "PRAGMA synchronous", "UPDATE intents", "PRAGMA wal_checkpoint")


class Timed:
    """The store's connection, its statements of KINDS timed by their place."""

    def __init__(self, conn: Any) -> None:
        self._conn, self.place = conn, 0

    def _run(self, method: Any, sql: str, *args: Any) -> Any:
        start = time.perf_counter()
        result = method(sql, *args)
        if sql.startswith(KINDS):
            TIMES[(self.place, sql[:22])].append(1e3 * (time.perf_counter() - start))
        self.place += sql == "COMMIT"
        return result

    def execute(self, sql: str, *args: Any) -> Any:
        return self._run(self._conn.execute, sql, *args)

    def executemany(self, sql: str, *args: Any) -> Any:
        return self._run(self._conn.executemany, sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def main() -> None:
    mode, instruments = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 268
    with tempfile.TemporaryDirectory() as tmp:
        config = stages.write_config(Path(tmp), instruments, 256)
        rig = stages.Rig(config, Path(tmp) / "state", "numpy")
        rig.trader.resume()
        timed = Timed(rig.store._conn)
        rig.store._conn = timed
        if mode == "none":
            rig.store.backfill_wal = lambda: None  # type: ignore[assignment,return-value]
        commits = []
        for n in range(20):
            if n == 4:
                TIMES.clear()
            timed.place = 0
            seen = len(TIMES[(1, "COMMIT")])
            rig.update(n)
            commits += TIMES[(1, "COMMIT")][seen:]
        rig.close()
    for (place, sql), ms in sorted(TIMES.items()):
        print(f"{mode} {place} {sql:22s} n={len(ms):3d} median {np.median(ms):.3f}")
    print(f"{mode} the checkpoint's COMMIT by update:", " ".join(f"{ms:.2f}" for ms in commits))


if __name__ == "__main__":
    main()
