# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""The checkpoint with the sampler's carries staged between bars, or written by the bar
(issue 14, item 4; fortieth session, schema version 9):
`python docs/bench-results/carries_off_the_bar.py [INSTRUMENTS] [UPDATES] [REPS] [MODES]`.

bench stages' rig (a real trader, the synthetic market and simulated broker, numpy, its
cheap model spec, the WAL copied back after each bar as the worker does) with [model]
sample_between_bars on, its sampler run after each bar's update as the worker runs it
(Trader.sample_between_bars: the sampler, then its carries encoded and staged). Two
modes, alternated REPS times (default 3):
- `staged`: the carries' row written then, in its own transaction, as the worker does;
- `bar`: the staging refused, so the bar's checkpoint writes the row in its own synced
  transaction (the bytes of the tree before, which held them in the blob; their
  encoding still ahead).
The numpy sampler's carries are float64 of its chains (the wgpu sampler's, float32
values, are stored narrowed: fewer bytes, docs/bench-results/round_blobs.py).
Prints one JSON line per run: the checkpoint stage's p50 and p99 ms over UPDATES warm
updates (default 24) and the bytes of WAL one more bar's update wrote (the WAL emptied
after the staging, before it)."""

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from service.bench import stages
from service.config_loader import load_config
from service.worker.between_bars import BetweenBars


def rig_between_bars(folder: Path, instruments: int) -> stages.Rig:
    """bench stages' rig with the sampler between bars, on the rig's cheap spec."""
    stages.write_config(folder, instruments, 256)
    toml = folder / "service.toml"
    toml.write_text(toml.read_text().replace("sample_between_bars = false",
                                             "sample_between_bars = true"))
    rig = stages.Rig(load_config(toml), folder / "state", "numpy")
    rig.trader.between = BetweenBars(rig.trader.spec, rig.trader.backend)
    return rig


def checkpoints(rig: stages.Rig, updates: int) -> list[float]:
    """The checkpoint stage's ms in `updates` warm updates of the rig, the sampler run
    after each bar (the cold update and a first warm one left out)."""
    rig.trader.resume()
    ms = []
    for n in range(updates + 2):
        event = rig.update(n)
        if n >= 2:
            ms.append(event["timings_ms"]["checkpoint"])
        rig.trader.sample_between_bars()  # the worker's step after the bar
    return ms


def figures(mode: str, instruments: int, ms: list[float]) -> dict[str, Any]:
    return {"mode": mode, "instruments": instruments, "updates": len(ms),
            "checkpoint_p50_ms": round(float(np.median(ms)), 3),
            "checkpoint_p99_ms": round(float(np.percentile(ms, 99)), 3)}


def alternated(run: Callable[[str, int, int], dict[str, Any]], modes: tuple[str, ...]) -> None:
    """`run(mode, INSTRUMENTS, UPDATES)` for each mode in turn, REPS times (the command
    line's, defaults 268, 24 and 3; a fourth argument, the modes to run, by commas), a
    JSON line each."""
    instruments = int(sys.argv[1]) if len(sys.argv) > 1 else 268
    updates = int(sys.argv[2]) if len(sys.argv) > 2 else 24
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    modes = tuple(sys.argv[4].split(",")) if len(sys.argv) > 4 else modes
    for _ in range(reps):
        for mode in modes:
            print(json.dumps(run(mode, instruments, updates)), flush=True)


def run(mode: str, instruments: int, updates: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="rt-carries-") as tmp:
        rig = rig_between_bars(Path(tmp), instruments)
        if mode == "bar":  # every staging refused: the checkpoint writes the row
            rig.store.stage_carries = lambda seq, arrays: False  # type: ignore[method-assign]
        try:
            ms = checkpoints(rig, updates)
            wal = rig.store.empty_wal()
            rig.update(updates + 2)
            wal_bytes = wal.stat().st_size
        finally:
            rig.close()
    return {**figures(mode, instruments, ms), "bar_wal_bytes": wal_bytes}


if __name__ == "__main__":
    alternated(run, ("staged", "bar"))
