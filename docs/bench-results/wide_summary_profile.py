# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""What the host's summary of a wide run costs: `python
docs/bench-results/wide_summary_profile.py [N]` (default 18: a trial account's wide
instruments) runs N instruments at an extension block's 32 chains on numpy (a short cold
start), gives the run its per-draw predictive as the lane sampler brings it, and times
estimate.estimate_of on it 20 times (min and median ms), then profiles 20 more (the
functions with the most time in all). A wide instrument's 32 chains were summarised on
the host when this was measured (run_summary's sort then held 256 draws; twenty-seventh
session); since the twenty-eighth session a device with the workgroup memory summarises
them, and the host's summary is the numpy backend's and the fallback's."""

import cProfile
import pstats
import sys
import time
from dataclasses import replace

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from regime_model.batches import build_batch
from regime_model.estimate import estimate_of
from regime_model.update import ModelSpec
from regime_model.width import wide_spec


def main() -> None:
    n, T = (int(sys.argv[1]) if len(sys.argv) > 1 else 18), 256
    series = 0.01 * regime_returns(n, T + 2, np.random.default_rng(0))
    spec, backend = wide_spec(ModelSpec(window=T)), NumpyBackend()
    batch, scale = build_batch(series[:, :T], [None] * n, np.arange(n, dtype=np.uint32), 1,
                               7, replace(spec, warmup_cold=20))  # fmt: skip
    result = backend.run_update(batch)
    L, S, D = result.draws.shape
    result = result._replace(predictive=backend.hmm_predictive(
        result.draws.reshape(L * S, D), batch.y, spec.n_states, draws_per_row=S))  # fmt: skip
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        estimate_of(result, batch.y, scale, spec, backend, diagnose=False)
        times.append(1e3 * (time.perf_counter() - t0))
    print(f"estimate_of of {n} wide instruments: min {min(times):.2f} ms, "
          f"median {float(np.median(times)):.2f} ms")  # fmt: skip
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(20):
        estimate_of(result, batch.y, scale, spec, backend, diagnose=False)
    profile.disable()
    pstats.Stats(profile).sort_stats("cumulative").print_stats(20)


if __name__ == "__main__":
    main()
