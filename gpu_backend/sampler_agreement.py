"""Full sampler runs on two backends, compared within Monte Carlo error.

Each backend runs `regime_model.update.refresh` on the same returns with R independent
seeds; every refresh is one posterior-mean estimate per instrument. For each decision
quantity (P(most turbulent regime) at the last bar, log predictive sd) the difference of
the backends' mean estimates is divided by its standard error from the pooled replicate
variance; the backends agree when every |z| <= Z_MAX.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from gpu_backend.identity import regime_returns
from regime_model.backend import Backend
from regime_model.types import FloatArray
from regime_model.update import ModelSpec, refresh

Z_MAX = 3.0
_SE_FLOOR = 1e-4  # quantities that every replicate puts at the same value are equal


class Agreement(NamedTuple):
    replicates: int
    instruments: int
    max_abs_z: float
    cpu_seconds: float
    gpu_seconds: float
    passed: bool


def _estimates(backend: Backend, returns: FloatArray, spec: ModelSpec, seeds: range) -> FloatArray:
    """[R, N, 2]: per replicate and instrument, P(turbulent) and log predictive sd."""
    keys = np.arange(len(returns), dtype=np.uint32)
    out = []
    for seed in seeds:
        est, _, _ = refresh(returns, [None] * len(returns), keys, 1, seed, spec, backend)
        out.append(np.stack([est.regime_probs[:, -1], np.log(est.pred_vol)], axis=1))
    return np.array(out)


def _timed(
    backend: Backend, returns: FloatArray, spec: ModelSpec, seeds: range
) -> tuple[FloatArray, float]:
    import time  # noqa: PLC0415

    t0 = time.perf_counter()
    values = _estimates(backend, returns, spec, seeds)
    return values, time.perf_counter() - t0


def compare_samplers(
    gpu: Backend,
    cpu: Backend,
    spec: ModelSpec,
    instruments: int = 3,
    replicates: int = 6,
) -> Agreement:
    returns = 0.01 * regime_returns(instruments, spec.window, np.random.default_rng(7))
    seeds = range(1000, 1000 + replicates)
    a, cpu_s = _timed(cpu, returns, spec, seeds)
    b, gpu_s = _timed(gpu, returns, spec, seeds)
    pooled = (a.var(axis=0, ddof=1) + b.var(axis=0, ddof=1)) / 2.0
    se = np.maximum(np.sqrt(2.0 * pooled / replicates), _SE_FLOOR)
    z = np.abs(a.mean(axis=0) - b.mean(axis=0)) / se
    max_z = float(z.max())
    return Agreement(replicates, instruments, max_z, cpu_s, gpu_s, max_z <= Z_MAX)
