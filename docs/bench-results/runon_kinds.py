# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Which instruments run on, and at what width (issue 14, twenty-eighth session): `python
docs/bench-results/runon_kinds.py N UPDATES [EXTENSION_CHAINS]` updates N instruments of
the daemon's synthetic market (T 256, K 2, 4 chains, the daemon's ModelSpec with
`extension_chains` as given, default 32; numpy) UPDATES + 1 times from a cold start, a bar
on each time (as wide_reasons.py), and prints one JSON line per update: its seconds, the
instruments that start it wide, its run-on blocks (block number, instruments), which of
the instruments that ran on started wide (their 32 chains failed the gate again) and
which narrow, the unconverged, and the windows with two readings."""

import json
import sys
import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from regime_model import update
from gpu_backend.numpy_backend import NumpyBackend
from regime_model.update import ModelSpec, refresh
from wide_reasons import T, returns_of  # beside this script

_blocks: list[tuple[int, list[int]]] = []
_build_batch = update.build_batch


def _noting_blocks(*args, **kwargs):  # build_batch, noting each run-on block's rows
    block = args[6] if len(args) > 6 else kwargs.get("extension", 0)
    rows = args[7] if len(args) > 7 else kwargs.get("rows")
    if block:
        _blocks.append((int(block), [int(r) for r in rows]))
    return _build_batch(*args, **kwargs)


def main() -> None:
    N, updates = int(sys.argv[1]), int(sys.argv[2])
    E = int(sys.argv[3]) if len(sys.argv) > 3 else 32
    spec = ModelSpec(window=T, extension_chains=E)
    series = returns_of(N, T + updates + 1, "synthetic")
    keys = np.arange(N, dtype=np.uint32)
    backend, carries = NumpyBackend(), [None] * N
    update.build_batch = _noting_blocks
    for u in range(updates + 1):
        wide = np.array([c is not None and len(c.position) > spec.chains for c in carries])
        _blocks.clear()
        t0 = time.perf_counter()
        estimate, carries, _ = refresh(series[:, u : u + T], carries, keys, u + 1, 7, spec,
                                       backend, diagnose="none")  # fmt: skip
        ran = sorted({i for _, rows in _blocks for i in rows})
        print(json.dumps({
            "update": u, "E": E, "s": round(time.perf_counter() - t0, 1),
            "wide_start": int(wide.sum()), "blocks": [(b, len(r)) for b, r in _blocks],
            "ran_on_wide": [i for i in ran if wide[i]],
            "ran_on_narrow": [i for i in ran if not wide[i]],
            "unconverged": int((~estimate.converged).sum()),
            "two": int((estimate.shift_acceptance > spec.two_readings).sum()),
        }), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
