# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""convergence() on decision draws (N x C x 40 x 2) with and without the tail ESS,
alternated four times, medians of 15 calls each (ms):
`python docs/bench-results/decision_convergence.py`."""

import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from regime_model.diagnostics import convergence


def median_ms(draws: np.ndarray, tail: bool) -> float:
    times = []
    for _ in range(15):
        start = time.perf_counter()
        convergence(draws, tail=tail)
        times.append(time.perf_counter() - start)
    return round(1e3 * float(np.median(times)), 2)


def main() -> None:
    rng = np.random.default_rng(0)
    for shape in ((268, 4, 40, 2), (54, 4, 40, 2), (19, 32, 40, 2)):
        draws = rng.normal(size=shape)
        runs: dict[bool, list[float]] = {True: [], False: []}
        for _ in range(4):
            for tail in (True, False):
                runs[tail].append(median_ms(draws, tail))
        print(shape, "with tail", runs[True], "without", runs[False])


if __name__ == "__main__":
    main()
