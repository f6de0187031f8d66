# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""The state store alone, on synthetic updates of N instruments with one new return each
(window T 256, 500 checkpoints retained, decisions for every instrument):
`python docs/bench-results/returns_store.py [N] [UPDATES]` (default 268, 700), run from
the root of the tree to measure (`cd TREE && python /path/to/returns_store.py` for
another commit's). Prints one JSON object (ms; WAL bytes per update)."""

import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))  # the tree run from, not this file's

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's
import numpy as np

from service.state.records import WindowWrite
from service.state.store import Checkpoint, DecisionRow, StateStore

WINDOW, RETENTION = 256, 500
T0 = datetime(2026, 1, 5, 14, 30, tzinfo=UTC)


def update(store: StateStore, seq: int, symbols: list[str], rng: np.random.Generator) -> float:
    """One update's commit (ms): one new return per instrument, its decision."""
    fresh = rng.normal(0.0, 0.01, len(symbols))
    length = min(seq, WINDOW)
    windows = {s: WindowWrite(fresh[i : i + 1], length) for i, s in enumerate(symbols)}
    rows = [DecisionRow(s, 0, 0.1, 0.0, 0.01, True, 0.0, 0.0) for s in symbols]
    checkpoint = Checkpoint(seq, T0 + timedelta(minutes=seq), "h", "numpy", "cpu", "float64",
                            1.0, 1.0, b"model", {"cursor": 0})
    start = time.perf_counter()
    store.commit_update(checkpoint, rows, [], windows=windows)
    return 1e3 * (time.perf_counter() - start)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 268
    updates = int(sys.argv[2]) if len(sys.argv) > 2 else 700
    symbols = [f"S{i:03d}" for i in range(n)]
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "alpha.sqlite"
        store = StateStore(path, retention=RETENTION, account="alpha")
        ms = [update(store, seq, symbols, rng) for seq in range(1, updates + 1)]
        store.empty_wal()  # then what 10 updates append to it
        for seq in range(updates + 1, updates + 11):
            update(store, seq, symbols, rng)
        wal_per_update = path.with_name(path.name + "-wal").stat().st_size / 10
        store.close()
        store = StateStore(path, retention=RETENTION, account="alpha")
        first = update(store, updates + 11, symbols, rng)
        start = time.perf_counter()
        store.windows(updates + 11)
        read = 1e3 * (time.perf_counter() - start)
        store.close()
    warm = ms[WINDOW:]
    pruning = [t for seq, t in enumerate(ms, 1) if seq > WINDOW and seq % 64 == 0]
    print(json.dumps({
        "instruments": n, "updates": updates,
        "commit_ms_p50": round(statistics.median(warm), 3),
        "pruning_commit_ms": [round(t, 1) for t in pruning],
        "first_commit_after_reopen_ms": round(first, 1),
        "read_windows_ms": round(read, 1),
        "wal_bytes_per_update": round(wal_per_update),
    }))


if __name__ == "__main__":
    main()
