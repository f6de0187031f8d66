# ruff: noqa: I001, PLC0415 - imported in _install only when RT_PARTS_OUT is set; regime_model first
"""Part timers inside the daemon's own workers (issue 14, item 4; thirty-ninth session).

`bench stages` runs a trader in one process, back to back, its events captured in memory;
the daemon's checkpoint and strategy at 268 instruments an account took 1.5-2 times its
figures on the same host. To see where, this file is put first on PYTHONPATH of a
`regime-trader bench round` run with RT_PARTS_OUT set: Python imports it at the start of
every process, the supervisor's and each spawned worker's, and it wraps the functions the
checkpoint and strategy stages call with a timer. After each update a worker appends one
JSON line to RT_PARTS_OUT/parts-<pid>.jsonl: each part's milliseconds in that update.
`python docs/bench-results/daemon_parts/summary.py RT_PARTS_OUT` prints the medians.
Without RT_PARTS_OUT it does nothing."""

import os

OUT = os.environ.get("RT_PARTS_OUT")


def _install(out: str) -> None:
    import json
    import time
    from pathlib import Path
    from typing import Any

    import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
    from service.broker import sim
    from service.control import trading_mode
    from service.state import (
        carry_stacks, checkpoint_codec, decision_columns, history, returns_rows, store,
        transaction,
    )
    from service.worker import targets, trader, warmup

    times: dict[str, float] = {}
    # From the fortieth session: the worker thread's own CPU time in these too, so that
    # compute (slow code, cold caches) and waiting (the sync, the GIL, another process on
    # the core) are told apart
    ON_CPU = {"checkpoint", "c.commit_update", "c.  COMMIT (every transaction)",
              "s.decide_targets", "c.encode_model_state"}

    def timed(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name, None)
        if original is None:  # a tree without this part
            return

        def run(*args: Any, **kwargs: Any) -> Any:
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                times[label] = times.get(label, 0.0) + 1e3 * (time.perf_counter() - start)
                if label in ON_CPU:  # this thread's CPU time in it: the rest, waited
                    on_cpu = f"{label} (on CPU)"
                    times[on_cpu] = times.get(on_cpu, 0.0) + 1e3 * (time.thread_time() - cpu)

        setattr(owner, name, run)

    for owner, name, label in (
        (trader.Trader, "_checkpoint", "checkpoint"),
        (trader, "encode_model_state", "c.encode_model_state"),
        (carry_stacks, "stack", "c.  stacked carries"),
        (carry_stacks, "encode", "c.  carries encoded"),  # schema 9 on (fortieth session)
        (checkpoint_codec, "_book_columns", "c.  book columns"),
        (checkpoint_codec, "encode_arrays", "c.  array encoding"),
        (checkpoint_codec, "window_sums", "c.  window sums"),
        (checkpoint_codec, "table_sums", "c.  window sums"),  # slid on (fortieth session)
        (warmup.Warmup, "book_entry", "c.warming entry"),
        (trader, "positions_entry", "c.positions entry"),
        (store.StateStore, "commit_update", "c.commit_update"),
        (store, "checkpoint_row", "c.  checkpoint row (JSON)"),
        (decision_columns, "pack", "c.  decisions packed"),
        (history, "record_update", "c.  instrument history"),
        (returns_rows.ReturnsRows, "write", "c.  returns and windows"),
        (transaction.Transaction, "__exit__", "c.  COMMIT (every transaction)"),
        (sim.SimBroker, "snapshot", "s.broker snapshot"),
        (trader, "decide_targets", "s.decide_targets"),
        (targets, "_model_decisions", "s.  model decisions"),
        (targets, "order_intents", "s.  order intents"),
        (targets, "_note_regime_changes", "s.  regime changes noted"),
        (trading_mode.TradingMode, "orders", "s.trading mode"),
    ):
        timed(owner, name, label)

    update = trader.Trader.update
    path = Path(out) / f"parts-{os.getpid()}.jsonl"

    def update_and_write(self: Any, *args: Any, **kwargs: Any) -> Any:
        times.clear()
        result = update(self, *args, **kwargs)
        with path.open("a") as f:
            f.write(json.dumps({"account": self.account, **times}) + "\n")
        return result

    trader.Trader.update = update_and_write


if OUT:
    _install(OUT)
