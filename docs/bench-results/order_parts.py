# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Where the reconcile and orders stages' time goes: `python docs/bench-results/
order_parts.py [N]` (default 268 instruments, window 256, numpy backend, the simulated
broker) runs the stages bench's rig for 14 updates with a timer around each part and
prints each part's median over the updates from the fifth on (ms). The daemon's own
parts (the store's reads and writes, the order events) against the simulated broker's
(lookup_many, submit_many): docs/benchmarks.md, eighteenth session."""

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from service.bench import stages
from service.broker import sim
from service.state import store
from service.worker import order_submission

UPDATES, WARM_FROM = 14, 4
TIMES: dict[str, list[float]] = {}


def timed(owner: Any, name: str, label: str) -> None:
    """Replace owner.name with a version that records its time under `label`."""
    original: Callable[..., Any] = getattr(owner, name)

    def run(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            TIMES.setdefault(label, []).append(1e3 * (time.perf_counter() - start))

    setattr(owner, name, run)


def main() -> None:
    instruments = int(sys.argv[1]) if len(sys.argv) > 1 else 268
    submitter = order_submission.OrderSubmitter
    timed(submitter, "resolve_open_intents", "reconcile (stage)")
    timed(store.StateStore, "open_intents", "  store: open intents")
    timed(submitter, "_batch_lookup", "  broker: lookup_many")
    timed(submitter, "send_all", "orders (stage)")
    timed(sim.SimBroker, "submit_many", "  broker: submit_many")
    timed(submitter, "_record", "  outcomes and their events (both stages)")
    timed(store.StateStore, "record_outcomes", "    store: record outcomes")
    with tempfile.TemporaryDirectory() as tmp:
        config = stages.write_config(Path(tmp), instruments, 256)
        rig = stages.Rig(config, Path(tmp) / "state", "numpy")
        rig.trader.resume()
        for n in range(UPDATES):
            rig.update(n)
        rig.close()
    for label, ms in TIMES.items():
        print(f"{label:42s} calls {len(ms):3d}  median {np.median(ms[WARM_FROM:]):7.3f}")


if __name__ == "__main__":
    main()
