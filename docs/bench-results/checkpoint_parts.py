# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Where the checkpoint stage's time goes: `python docs/bench-results/checkpoint_parts.py
[N]` (default 268 instruments, window 256, numpy backend) runs the stages bench's rig for
14 updates with a timer around each part of Trader._checkpoint and prints each part's
median over the 12 warm ones (ms) and its total per update (a part that runs more than
once per update, such as a COMMIT, counts every run). The figures in docs/benchmarks.md
("What the checkpoint still costs ...") come from this."""

import sys

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from part_timers import TIMES, run_rig, timed
from service.state import (
    checkpoint_codec,
    decision_columns,
    history,
    returns_rows,
    store,
    transaction,
)
from service.worker import trader, warmup

UPDATES, WARM_FROM = 14, 2


def main() -> None:
    instruments = int(sys.argv[1]) if len(sys.argv) > 1 else 268
    timed(trader.Trader, "_checkpoint", "stage")
    timed(trader, "encode_model_state", "encode_model_state")
    if hasattr(checkpoint_codec, "_stacked_carries"):  # a tree before carry_stacks.py
        timed(checkpoint_codec, "_stacked_carries", "  stacked carries")
    else:
        from service.state import carry_stacks  # noqa: PLC0415 - as the tree has it
        timed(carry_stacks, "stack", "  stacked carries")
    for owner, name, label in ((checkpoint_codec, "_book_columns", "  book columns"),
                               (checkpoint_codec, "encode_arrays", "  array encoding"),
                               (checkpoint_codec, "window_sums", "  window sums"),
                               (decision_columns, "pack", "  decisions packed"),
                               (warmup.Warmup, "book_entry", "warming entry")):
        if hasattr(owner, name):  # timed from the thirty-eighth session, where a tree has it
            timed(owner, name, label)
    timed(trader, "positions_entry", "positions entry")
    timed(store.StateStore, "commit_update", "commit_update")
    timed(store, "checkpoint_row", "  checkpoint row (JSON)")  # the store's own name for it
    timed(history, "record_update", "  instrument history")
    timed(returns_rows.ReturnsRows, "write", "  returns and windows")
    timed(transaction.Transaction, "__exit__", "  COMMIT (every transaction)")
    run_rig(instruments, UPDATES)
    warm = UPDATES - WARM_FROM
    for label, ms in TIMES.items():
        per_update = len(ms) // UPDATES
        kept = ms[WARM_FROM * per_update:]
        print(f"{label:30s} median {np.median(kept):7.3f}  per update {sum(kept) / warm:7.3f}")


if __name__ == "__main__":
    main()
