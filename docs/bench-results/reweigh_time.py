# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""The bar's reweighing alone at a trial account's shape (issue 14, thirtieth session):
`python docs/bench-results/reweigh_time.py BACKEND [REPEATS [profile] [embedded]]`, from the
tree to time (PYTHONPATH=TREE); `profile` adds a line with one more call's 15 largest
cumulative times under cProfile. 36 instruments of 4 chains x 40 draws and 18 of 32 x 40
(28,800 draws; `embedded`: an embedded default account's 8, 6 and 2, 3,520 draws;
`runon`: 54 of 160 to 6,400, 55,840 draws, as a trial account's samples were after the
at-risk run-ons in a one-account round, thirty-sixth session)
around the priors' centre, their log densities on one window, reweighed to the
next (one bar on); prints one JSON line: the median ms of REPEATS calls (default 9) of
regime_model.reweigh.reweigh after two to warm, and the range."""

import cProfile
import json
import pstats
import sys
import time

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend import select_backend
from regime_model.batches import prior_centre
from regime_model.estimate import RegimeEstimate
from regime_model.reweigh import reweigh

try:
    from regime_model.sample import Sample, sample_of
except ImportError:  # a tree before the Sample had its own module (thirty-sixth session)
    from regime_model.reweigh import Sample, sample_of  # type: ignore[attr-defined,no-redef]

from regime_model.update import ModelSpec


def main() -> None:
    backend = select_backend(sys.argv[1])
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    spec = ModelSpec()
    rng = np.random.default_rng(1)
    sizes = [160] * 6 + [1280] * 2 if "embedded" in sys.argv[3:] else [160] * 36 + [1280] * 18
    if "runon" in sys.argv[3:]:  # a trial account's samples after the at-risk run-ons
        sizes = [160] * 21 + [1280] * 29 + [2560] * 2 + [3840, 6400]
    N = len(sizes)
    returns = 0.01 * rng.standard_normal((N, spec.window + 1))
    draws = [prior_centre(2, spec.priors)[None] + 0.1 * rng.standard_normal((m, 6))
             for m in sizes]  # fmt: skip
    fields = {k: np.zeros(N) for k in RegimeEstimate._fields}
    fields.update(regime_probs=np.full((N, 2), 0.5), converged=np.ones(N, dtype=bool),
                  divergences=np.zeros(N, dtype=np.int64), p_turbulent_mcse=np.full(N, 0.01),
                  vol_mcse=np.full(N, 0.01))  # fmt: skip
    sample: Sample = sample_of(returns[:, :-1], RegimeEstimate(**fields), draws, spec, backend)
    rows, now = np.arange(N), returns[:, 1:]
    for _ in range(2):
        reweigh(sample, rows, now, spec, backend)
    ms = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        reweigh(sample, rows, now, spec, backend)
        ms.append(1e3 * (time.perf_counter() - t0))
    print(json.dumps({"backend": backend.name, "adapter": backend.adapter, "draws": sum(sizes),
                      "median_ms": round(float(np.median(ms)), 2), "min_ms": round(min(ms), 2),
                      "max_ms": round(max(ms), 2)}))  # fmt: skip
    if "profile" in sys.argv[3:]:
        profile = cProfile.Profile()
        profile.runcall(reweigh, sample, rows, now, spec, backend)
        stats = pstats.Stats(profile).sort_stats("cumulative")
        top = sorted(stats.stats.items(), key=lambda kv: -kv[1][3])[:15]  # type: ignore[attr-defined]
        print(json.dumps({"profile_ms": [[round(1e3 * v[3], 2), v[1], f"{k[0]}:{k[1]}({k[2]})"]
                                         for k, v in top]}))  # fmt: skip


if __name__ == "__main__":
    main()
