"""`regime-trader bench digest`: SHA-256 digests of a fixed numpy update and a fixed fit.

The same numpy version must give the same digests on every x86-64 host; CI checks them
against the golden values committed in tests/data/golden_digests.json, and the H200 host's
CPU (an Intel Xeon, where this machine is an AMD EPYC) is checked through the device tool.
The inputs come from integers (PCG64) scaled by powers of two, so they are exact on every
host and no transcendental function touches them before the model does.
"""

from __future__ import annotations

import hashlib
import platform
from typing import Any

import numpy as np

from gpu_backend.numpy_backend import NumpyBackend
from regime_model.fit import fit_series
from regime_model.sampler import SamplerConfig
from regime_model.spec import ModelSpec
from regime_model.types import Priors
from regime_model.update import refresh

# One extension block of 8 chains, so that the digest covers the gate, the two-readings
# signal and the block that starts at the draws; the next bar's update, its wide start.
UPDATE_SPEC = ModelSpec(window=128, warmup_cold=60, draws=20, extend_max=1,
                        extension_chains=8, extension_warmup=10)  # fmt: skip


def exact_returns(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Returns in (-0.04, 0.04) with a calm and a volatile stretch, exactly representable."""
    ticks = np.random.default_rng(seed).integers(-(2**20), 2**20, size=shape)
    scale = np.where(np.arange(shape[-1]) % 200 < 150, 2.0**-26, 2.0**-25)
    out: np.ndarray = ticks * scale
    return out


def _sha(*arrays: Any) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()


def update_digest() -> str:
    """A cold update that takes its extension block, then the next bar's warm update, in
    which the instruments that ran on start wide (regime_model.width)."""
    returns = exact_returns((8, UPDATE_SPEC.window + 1), 11)
    carries: list[Any] = [None] * 8
    arrays: list[Any] = []
    for seq in (1, 2):
        window = returns[:, seq - 1 : seq - 1 + UPDATE_SPEC.window]
        estimate, carries, info = refresh(window, carries, np.arange(8), seq, 7, UPDATE_SPEC,
                                          NumpyBackend())  # fmt: skip
        if seq == 1 and not info.extended:
            raise AssertionError("the fixed update must take its extension block to cover it")
        arrays += [*estimate, *(c.position for c in carries), *(c.step_size for c in carries)]
    return _sha(*arrays)


def fit_digest() -> str:
    """Both kinds of fit's samplers: 600 returns end at the adapted one (split-2 misses
    the rule with 60 draws), 3,000 stop at split-1 (the Newton climb, the Jacobi
    eigen-decomposition and the split integrator)."""
    arrays = []
    for n, draws, warmup in ((600, 60, 60), (3000, 100, None)):
        result = fit_series(exact_returns((n,), 5), 2, 3, Priors(), SamplerConfig(draws, 4), warmup)
        arrays += [result.draws, result.filtered, result.smoothed, result.sampler.step_size]
    return _sha(*arrays)


def digests() -> dict[str, Any]:
    features = getattr(np, "__cpu_features__", {})
    return {
        "update": update_digest(),
        "fit": fit_digest(),
        "numpy": np.__version__,
        "machine": platform.machine(),
        "cpu_avx512f": bool(features.get("AVX512F")),
    }
