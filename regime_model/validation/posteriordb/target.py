"""What a ported posterior offers the sampler and the reference comparison."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from regime_model.types import FloatArray, LogDensityFn


class Target(NamedTuple):
    dim: int  # D, the number of unconstrained coordinates
    logdensity: LogDensityFn  # theta [L, D] -> (log density [L], gradient [L, D])
    # theta [..., D] -> {Stan parameter name ("mu[1]"): constrained values [...]}
    constrain: Callable[[FloatArray], dict[str, FloatArray]]
