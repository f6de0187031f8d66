"""The host's fsync alone (issue 14, item 4; thirty-sixth session): `python
docs/bench-results/fsync_time.py DIR N` appends 4 KB to a file in DIR and fsyncs it N
times; prints one JSON line, the median and 99th percentile ms. The floor under a
checkpoint's COMMIT, which syncs the WAL once (service/state/store.py)."""

import json
import os
import sys
import tempfile
import time


def main() -> None:
    folder, n = sys.argv[1], int(sys.argv[2])
    times = []
    with tempfile.NamedTemporaryFile(dir=folder) as f:
        for _ in range(n):
            t0 = time.perf_counter()
            os.write(f.fileno(), b"\0" * 4096)
            os.fsync(f.fileno())
            times.append(1e3 * (time.perf_counter() - t0))
    times.sort()
    print(json.dumps({"fsync_4k_ms": {"p50": round(times[n // 2], 3),
                                      "p99": round(times[min(n - 1, int(0.99 * n))], 3)},
                      "dir": folder, "n": n}))  # fmt: skip


if __name__ == "__main__":
    main()
