"""The one interface every compute backend implements, and what it returns."""

from __future__ import annotations

from typing import NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from regime_model.types import Priors

FloatArray = npt.NDArray[np.float64]


class PredictiveBatch(NamedTuple):
    filtered_last: FloatArray  # [L, K] P(regime at the last bar | y)
    mean: FloatArray  # [L] mean of the next (scaled) return
    var: FloatArray  # [L] variance of the next (scaled) return


class Backend(Protocol):
    """Batched HMM numerics on some device. Lanes are independent; y is already scaled.

    name: registry name ("numpy", later "wgpu"); adapter: the device it runs on;
    numerics: the float type of its arithmetic ("float64", "float32"). All three are
    recorded with every update so a checkpoint says what produced it.
    """

    @property
    def name(self) -> str: ...

    @property
    def adapter(self) -> str: ...

    @property
    def numerics(self) -> str: ...

    def hmm_value_and_grad(
        self, theta: FloatArray, y: FloatArray, n_states: int, priors: Priors
    ) -> tuple[FloatArray, FloatArray]:
        """Unconstrained log posterior [L] and its gradient [L, D] for theta [L, D], y [L, T]."""
        ...

    def hmm_predictive(self, theta: FloatArray, y: FloatArray, n_states: int) -> PredictiveBatch:
        """Filtered last-bar regime and next-return mixture moments for each lane."""
        ...
