# ruff: noqa: I001 - regime_model before numpy: the daemon's numpy dispatch
"""verify-gpu's warm-sampler check, replicate by replicate: `python
docs/bench-results/warm_agreement.py [R] [WINDOW]` (default 8 replicates, the quick check's
window of 128). Runs what gpu_backend.sampler_agreement.compare_warm_samplers runs (3
instruments warm-started from a cold numpy update, one refresh per seed on each backend,
the daemon's ModelSpec otherwise), and prints one JSON line per seed: each backend's
P(turbulent) and log predictive sd per instrument, and the instruments each ran on; then
one line with the check's |z| per instrument and quantity over the first 4 seeds (the
quick check) and over all R, with the thresholds sampler_agreement applies."""

import json
import sys

import regime_model  # noqa: F401 - numpy's dispatch as the daemon's, before numpy loads
import numpy as np

from gpu_backend.numpy_backend import NumpyBackend
from gpu_backend.agreement_threshold import z_max
from gpu_backend.sampler_agreement import _warm_start
from gpu_backend.wgpu_backend import WgpuBackend
from regime_model.update import ModelSpec, refresh


def main() -> None:
    R = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    window = int(sys.argv[2]) if len(sys.argv) > 2 else 128
    gpu, cpu = WgpuBackend(), NumpyBackend()
    spec = ModelSpec(window=window, warmup_cold=100 if window == 128 else 300)
    returns, carries = _warm_start(cpu, spec, 3)
    keys = np.arange(len(returns), dtype=np.uint32)
    values = {"numpy": [], "wgpu": []}
    for seed in range(1000, 1000 + R):
        line: dict[str, object] = {"seed": seed}
        for name, backend in (("numpy", cpu), ("wgpu", gpu)):
            est, _, info = refresh(returns, carries, keys, 2, seed, spec, backend)
            v = np.stack([est.regime_probs[:, -1], np.log(est.pred_vol)], axis=1)
            values[name].append(v)
            line[name] = np.round(v, 5).tolist()
            line[f"{name}_extended"] = info.extended
            line[f"{name}_converged"] = est.converged.tolist()
        print(json.dumps(line), flush=True)
    a, b = np.array(values["numpy"]), np.array(values["wgpu"])
    out: dict[str, object] = {
        "adapter": gpu.device.info.adapter,
        "steps": [spec.steps_min, spec.steps_max],
    }
    for n in sorted({min(4, R), R}):
        pooled = (a[:n].var(axis=0, ddof=1) + b[:n].var(axis=0, ddof=1)) / 2.0
        se = np.maximum(np.sqrt(2.0 * pooled / n), 1e-4)
        z = np.abs(a[:n].mean(axis=0) - b[:n].mean(axis=0)) / se
        out[f"z_{n}"] = np.round(z, 2).tolist()
        out[f"threshold_{n}"] = round(z_max(n), 3)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
