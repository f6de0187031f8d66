"""Time the HMM's messages and the whole value-and-gradient at the shapes that matter.

    PYTHONPATH=CHECKOUT python docs/bench-results/messages_time.py

Shapes: 4 chains x 5,030 bars (`fit` on S&P 500), 1,072 lanes x 256 bars (one trial
account's update: 268 instruments x 4 chains), 128 lanes x 256 bars (a 32-instrument
batch). Random returns and parameters with a fixed seed; median and best of 30 calls
after 5 warm-up calls, in ms. Also the sampler's own cost per transition: 40 warm-up +
410 draws (450 transitions, 1 leapfrog step each) of a 6-dimensional unit Gaussian for 4
chains, whose density costs next to nothing ("sampler_450_transitions_s", best of 3).
Run it in a checkout of each commit to compare, alternating.
"""

from __future__ import annotations

import json
import time

import numpy as np

from gpu_backend.numpy_backend import tune_allocator
from regime_model import hmm, rng
from regime_model.posterior import log_density_and_grad
from regime_model.sampler import LaneStart, SamplerConfig, sample
from regime_model.types import Priors

SHAPES = ((4, 5030), (1072, 256), (128, 256))


def timed(call: object, repeats: int = 30) -> dict[str, float]:
    for _ in range(5):
        call()  # type: ignore[operator]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return {"median_ms": round(1e3 * float(np.median(times)), 3),
            "best_ms": round(1e3 * min(times), 3)}  # fmt: skip


def shape(L: int, T: int) -> dict[str, object]:
    rs = np.random.default_rng(1)
    y = rs.standard_normal((L, T))
    theta = np.tile([0.1, -0.1, -0.2, 0.5, -3.0, -3.0], (L, 1)) + rs.normal(0, 0.1, (L, 6))
    P = rs.dirichlet([8.0, 1.0], size=(L, 2))
    log_e = hmm.gaussian_log_emissions(y, rs.normal(0, 0.3, (L, 2)), rs.normal(0, 0.3, (L, 2)))
    rel = hmm.relative_emissions(log_e).rel
    init = np.full((L, 2), 0.5)
    messages = timed(lambda: hmm.messages(rel, P, init))
    value_and_grad = timed(lambda: log_density_and_grad(theta, y, 2, Priors()))
    return {"lanes": L, "bars": T, "messages": messages, "value_and_grad": value_and_grad}


def sampler_overhead() -> float:
    def gaussian(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return -0.5 * (x**2).sum(axis=1), -x

    lanes = rng.make_stream(1, np.zeros(4, np.uint32), np.arange(4, dtype=np.uint32), 0)
    zero = np.zeros(1, np.uint32)
    start = LaneStart(np.zeros((4, 6)), np.ones(4), np.ones((4, 6)), np.full(4, 40),
                      np.zeros(4, bool))  # fmt: skip
    config = SamplerConfig(draws=410, chains=4, steps_min=1, steps_max=1)
    best = float("inf")
    for _ in range(3):
        begin = time.perf_counter()
        sample(gaussian, start, lanes, rng.make_stream(1, zero, zero, 0), config)
        best = min(best, time.perf_counter() - begin)
    return round(best, 3)


def main() -> None:
    tune_allocator()
    rows: list[object] = [shape(L, T) for L, T in SHAPES]
    print(json.dumps([*rows, {"sampler_450_transitions_s": sampler_overhead()}]))


if __name__ == "__main__":
    main()
