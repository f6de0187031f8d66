# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""Where a chained update's time goes (`bench model`'s chained ESS, issue 14's NumPyro
ratio): `python docs/bench-results/chained_profile.py [SHAPE] [BACKEND] [R] [REPEATS]`
(default trial, wgpu, 5 updates, 3 repeats) sets up as `bench model` does (its synthetic
returns, a cold then a warm update) and runs gpu_backend.bench.chained_ess REPEATS times
from the same carries, one JSON line each (the same figures as `bench model`'s chained_*,
so the repeats show their spread on one machine). With PROFILE=PATH the last repeat runs
under cProfile and PATH gets the functions with the most time of their own, then with the
most time in all."""

import cProfile
import io
import json
import os
import pstats
import sys

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend import select_backend
from gpu_backend.bench.chained_ess import chained_runs, model_start
from regime_model.update import ModelSpec
from service.commands.bench import SHAPES, _synthetic_returns


def main() -> None:
    shape = sys.argv[1] if len(sys.argv) > 1 else "trial"
    backend = select_backend(sys.argv[2] if len(sys.argv) > 2 else "wgpu")
    updates = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    N = SHAPES[shape]
    spec, keys = ModelSpec(), np.arange(N)
    window, carries = model_start(_synthetic_returns(N), keys, spec, backend)
    path = os.environ.get("PROFILE")
    for k in range(repeats):
        profile = cProfile.Profile() if path and k == repeats - 1 else None
        if profile:
            profile.enable()
        figures = chained_runs(backend, window, carries, keys, 3, 7, spec, updates).figures()
        if profile:
            profile.disable()
            out = io.StringIO()
            stats = pstats.Stats(profile, stream=out)
            stats.sort_stats("tottime").print_stats(40)
            stats.sort_stats("cumulative").print_stats(60)
            with open(path, "w") as f:
                f.write(out.getvalue())
        print(json.dumps({"repeat": k, "shape": shape, "backend": backend.name,
                          "profiled": profile is not None, **figures}), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
