# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""The checkpoint's model-state encoding with carries of two shapes (issue 14, thirty-sixth
session): `python docs/bench-results/carries_encode.py [REPEATS]`, from the tree to time
(PYTHONPATH=TREE). A trial account's 54 instruments, windows of 256, 28 carrying a run-on
block's 32 chains and 26 the daemon's 4 (as a one-account trial round left them); prints
one JSON line: the median ms of service.state.checkpoint_codec.encode_model_state over
REPEATS calls (default 200) and the blob's size (from schema version 9, the fortieth
session, the carries are a row of their own: the blob's size then is without them)."""

import json
import sys
import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from regime_model.update import InstrumentCarry
from service.model_state import InstrumentState, ModelState
from service.state.checkpoint_codec import encode_model_state


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    gen = np.random.default_rng(3)
    state = ModelState({
        f"S{i:02d}": InstrumentState(f"S{i:02d}", returns=0.01 * gen.standard_normal(256),
                                     carry=InstrumentCarry(
                                         gen.normal(size=(32 if i < 28 else 4, 6)),
                                         gen.uniform(0.1, 0.5, 32 if i < 28 else 4),
                                         gen.uniform(0.5, 2.0, 6)))
        for i in range(54)})  # fmt: skip
    ms = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        blob = encode_model_state(state)[0]  # the blob, in every tree's return value
        ms.append(1e3 * (time.perf_counter() - t0))
    print(json.dumps({"median_ms": round(float(np.median(ms)), 3), "blob_bytes": len(blob)}))


if __name__ == "__main__":
    main()
