# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""What a shared device's reply costs to pass to a worker: `python
docs/bench-results/reply_transfer.py [LANES [REPEATS]]` (defaults 3800, the trial
shape's first gathering, and 7).

A SampleResult of LANES lanes (40 draws of 6 parameters, K = 2, float32-valued draws and
predictive as a device run's) is sent through a multiprocessing Pipe to a child that
answers at once, as the device process sends its replies: as it is (float64) and as
gpu_backend.result_transfer.compact makes it (float32 where exact, widened again on
arrival). One JSON line per way: its pickled MB and each repeat's send-to-answer ms.
"""

import json
import pickle
import sys
import time
from multiprocessing import Pipe, Process
from multiprocessing.connection import Connection

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.result_transfer import compact, expand
from regime_model.sampler import SampleResult
from regime_model.types import PredictiveBatch

S, D, K = 40, 6, 2


def device_like(lanes: int) -> SampleResult:
    rng = np.random.default_rng(1)

    def f32(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32).astype(np.float64)

    return SampleResult(
        draws=f32(lanes, S, D), divergences=np.zeros(lanes, np.int64), acceptance=f32(lanes),
        step_size=f32(lanes), inv_mass=f32(lanes, D), gradient_evals=1000,
        timings_ms={"device_update": 1.0}, energy=rng.standard_normal((lanes, S)),
        trajectory_length=f32(lanes), mean_steps=f32(lanes),
        predictive=PredictiveBatch(f32(lanes * S, K), f32(lanes * S), f32(lanes * S)),
    )  # fmt: skip


def answer(conn: Connection) -> None:
    while (message := conn.recv()) is not None:
        expand(message)  # what the worker does on arrival
        conn.send(1)


def main() -> None:
    lanes = int(sys.argv[1]) if len(sys.argv) > 1 else 3800
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    ours, theirs = Pipe()
    child = Process(target=answer, args=(theirs,))
    child.start()
    result = device_like(lanes)
    for way, made in (("float64", lambda: result), ("compact", lambda: compact(result))):
        ms = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            ours.send(made())
            ours.recv()
            ms.append(round(1e3 * (time.perf_counter() - t0), 1))
        size = len(pickle.dumps(made(), protocol=pickle.HIGHEST_PROTOCOL)) / 1e6
        print(json.dumps({"way": way, "lanes": lanes, "mb": round(size, 1), "ms": ms}), flush=True)
    ours.send(None)
    child.join()


if __name__ == "__main__":
    main()
