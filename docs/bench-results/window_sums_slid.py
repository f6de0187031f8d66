# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""The checkpoint with its windows' sums slid on from the last checkpoint's, or summed
whole (issue 14, item 4; fortieth session):
`python docs/bench-results/window_sums_slid.py [INSTRUMENTS] [UPDATES] [REPS]`.

The rig of carries_off_the_bar.py (bench stages' rig, numpy, the sampler between bars
run after each bar as the worker runs it). Two modes, alternated REPS times (default 3):
`slid` (window_sums.table_sums, as built) and `whole` (window_sums over every window of
the table at each checkpoint, as before). Prints one JSON line per run: the checkpoint
stage's p50 and p99 ms over UPDATES warm updates (default 24)."""

import tempfile
from pathlib import Path
from typing import Any

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads

from carries_off_the_bar import alternated, checkpoints, figures, rig_between_bars
from service.state import checkpoint_codec
from service.state.window_sums import window_sums


def run(mode: str, instruments: int, updates: int) -> dict[str, Any]:
    slid = checkpoint_codec.table_sums
    if mode == "whole":
        checkpoint_codec.table_sums = lambda table: window_sums(table.view)
    try:
        with tempfile.TemporaryDirectory(prefix="rt-sums-") as tmp:
            rig = rig_between_bars(Path(tmp), instruments)
            try:
                return figures(mode, instruments, checkpoints(rig, updates))
            finally:
                rig.close()
    finally:
        checkpoint_codec.table_sums = slid


if __name__ == "__main__":
    alternated(run, ("slid", "whole"))
