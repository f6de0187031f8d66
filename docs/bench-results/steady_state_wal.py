# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""The checkpoint once retention prunes with every update (issue 14, item 4; thirty-ninth
session): `python docs/bench-results/steady_state_wal.py MODE RETENTION [N]` runs the
stages bench's rig (service.bench.stages, numpy, window 256, N instruments, default 268)
for 30 updates with its store's retention set to RETENTION and SQLite's secure_delete
set to MODE (on: Debian's build's default; fast: the store's from this session; or
`as-opened`: left as the tree's store opens it), and prints the median over updates 9-30
of the checkpoint stage (ms) and of the WAL bytes each update writes. `bench stages` and
`bench round` run fewer updates than the default retention (500), so their figures never
include the pruning a daemon does with each update once it has run that long."""

import statistics
import sys
import tempfile
import time
from pathlib import Path

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
from structlog.testing import capture_logs

from service.bench import stages
from service.worker import trader

UPDATES, FROM = 30, 8


def main() -> None:
    mode, retention = sys.argv[1], int(sys.argv[2])
    instruments = int(sys.argv[3]) if len(sys.argv) > 3 else 268
    times: list[float] = []
    checkpoint = trader.Trader._checkpoint

    def timed(self: trader.Trader, *args: object) -> None:
        start = time.perf_counter()
        try:
            checkpoint(self, *args)  # type: ignore[arg-type]
        finally:
            times.append(1e3 * (time.perf_counter() - start))

    trader.Trader._checkpoint = timed  # type: ignore[method-assign]
    wal_bytes = []
    with tempfile.TemporaryDirectory() as tmp:
        rig = stages.Rig(stages.write_config(Path(tmp), instruments, 256),
                         Path(tmp) / "state", "numpy")
        rig.store.retention = retention
        if mode != "as-opened":
            rig.store._conn.execute(f"PRAGMA secure_delete = {mode}")
        rig.trader.resume()
        for n in range(UPDATES):
            wal = rig.store.empty_wal()
            with capture_logs():
                rig.trader.update(rig.bar(n))
            wal_bytes.append(wal.stat().st_size)
        rig.close()
    print(f"secure_delete {mode}, retention {retention}, {instruments} instruments: "
          f"checkpoint p50 {statistics.median(times[FROM:]):.3f} ms, WAL per update p50 "
          f"{statistics.median(wal_bytes[FROM:]):.0f} B")


if __name__ == "__main__":
    main()
