# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Where the reconcile and orders stages' time goes: `python docs/bench-results/
order_parts.py [N]` (default 268 instruments, window 256, numpy backend, the simulated
broker) runs the stages bench's rig for 14 updates with a timer around each part and
prints each part's median over the updates from the fifth on (ms). The daemon's own
parts (the store's reads and writes, the order events) against the simulated broker's
(lookup_many, submit_many): docs/benchmarks.md, eighteenth session."""

import sys

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from part_timers import TIMES, run_rig, timed
from service.broker import sim
from service.state import store
from service.worker import order_submission

UPDATES, WARM_FROM = 14, 4


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
    run_rig(instruments, UPDATES)
    for label, ms in TIMES.items():
        print(f"{label:42s} calls {len(ms):3d}  median {np.median(ms[WARM_FROM:]):7.3f}")


if __name__ == "__main__":
    main()
