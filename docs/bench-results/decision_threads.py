# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""The gate's diagnostics of 268 instruments' decision draws (268 x 4 x 40 x 2), split over
1, 2 and 4 threads of DeferredDiagnostics, alternated four times, medians of 15 calls
(ms): `python docs/bench-results/decision_threads.py`. A host gives the daemon
min(4, cores // 2) threads (deferred_diagnostics.diagnostic_threads)."""

import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from regime_model.deferred_diagnostics import DeferredDiagnostics


def median_ms(draws: np.ndarray, threads: int) -> float:
    times = []
    with DeferredDiagnostics(len(draws), threads=threads) as later:
        for _ in range(15):
            start = time.perf_counter()
            later.decisions(draws)
            times.append(time.perf_counter() - start)
    return round(1e3 * float(np.median(times)), 2)


def main() -> None:
    draws = np.random.default_rng(0).uniform(size=(268, 4, 40, 2))
    runs: dict[int, list[float]] = {1: [], 2: [], 4: []}
    for _ in range(4):
        for threads, ms in runs.items():
            ms.append(median_ms(draws, threads))
    for threads, ms in runs.items():
        print(f"{threads} thread(s): {ms}")


if __name__ == "__main__":
    main()
