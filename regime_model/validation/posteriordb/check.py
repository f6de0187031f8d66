"""Run the regime model's sampler on a ported posterior and judge it against a reference.

The pass rule is Stan's benchmark rule plus sampler health: for every parameter, the
posterior mean within 0.25 reference sd, the sd ratio within [0.9, 1.1], rank-normalised
split R-hat < 1.01, bulk ESS >= 400, and no divergent transition while sampling.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from regime_model import rng
from regime_model.diagnostics import convergence
from regime_model.sampler import LaneStart, SamplerConfig, SampleResult, sample
from regime_model.validation.posteriordb.target import Target

MAX_Z, SD_RATIO, MAX_RHAT, MIN_ESS = 0.25, (0.9, 1.1), 1.01, 400.0
INIT_RADIUS = 2.0  # Stan's default: uniform(-2, 2) on every unconstrained coordinate


class ParameterCheck(NamedTuple):
    name: str
    z: float  # |mean - reference mean| / reference sd
    sd_ratio: float
    rhat: float
    ess_bulk: float

    @property
    def passed(self) -> bool:
        lo, hi = SD_RATIO
        return bool(
            self.z < MAX_Z
            and lo <= self.sd_ratio <= hi
            and self.rhat < MAX_RHAT
            and self.ess_bulk >= MIN_ESS
        )


def run(target: Target, config: SamplerConfig, warmup: int, seed: int) -> SampleResult:
    """One instrument's worth of chains (config.chains lanes) from Stan-style inits."""
    C = config.chains
    lanes = rng.make_stream(seed, np.zeros(C, np.uint32), np.arange(C, dtype=np.uint32), 0)
    zero = np.zeros(1, np.uint32)
    u = rng.uniform(lanes, 0, rng.Purpose.INIT, target.dim)
    start = LaneStart(
        INIT_RADIUS * (2.0 * u - 1.0),
        np.full(C, 0.1),
        np.ones((C, target.dim)),
        np.full(C, warmup, dtype=np.int64),
        np.ones(C, dtype=bool),
    )
    return sample(target.logdensity, start, lanes, rng.make_stream(seed, zero, zero, 0), config)


def compare(
    target: Target, result: SampleResult, reference: Mapping[str, Mapping[str, float]]
) -> list[ParameterCheck]:
    named = target.constrain(result.draws)  # each [C, S]
    stacked = np.stack([named[name] for name in reference], axis=-1)[None]
    diag = convergence(stacked)
    checks = []
    for d, (name, ref) in enumerate(reference.items()):
        x = named[name].ravel()
        checks.append(
            ParameterCheck(
                name,
                float(abs(x.mean() - ref["mean"]) / ref["sd"]),
                float(x.std(ddof=1) / ref["sd"]),
                float(diag.rhat[0, d]),
                float(diag.ess_bulk[0, d]),
            )
        )
    return checks
