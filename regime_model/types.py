"""Types shared by the regime model: array aliases, the log-density and trajectory
contracts, the priors."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
UIntArray = npt.NDArray[np.uint32]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# theta [L, D] -> (log density [L], gradient [L, D]); the sampler knows nothing else about a model.
LogDensityFn = Callable[[FloatArray], tuple[FloatArray, FloatArray]]
# Called after every sampler iteration with (iterations done, in all): a progress bar.
Progress = Callable[[int, int], None]


class Trajectory(NamedTuple):
    """The end of a leapfrog trajectory, unsanitised: a faulted lane shows non-finite values."""

    position: FloatArray  # [L, D]
    momentum: FloatArray  # [L, D]
    logdensity: FloatArray  # [L]
    grad: FloatArray  # [L, D]


# (position, momentum, grad, step_size [L], inv_mass [L, D], lane_steps [L]) -> the end of
# lane_steps[l] leapfrog steps from the unkicked momentum: `hmc.host_leapfrog`'s math.
TrajectoryFn = Callable[
    [FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, IntArray], Trajectory
]


class MovedTrajectories(NamedTuple):
    """One transition's trajectories both ways round a move not yet decided: from the
    lanes' positions and from the move's proposals, and the density at the proposals."""

    stay: Trajectory
    moved: Trajectory
    proposal_logdensity: FloatArray  # [L], unsanitised
    proposal_grad: FloatArray  # [L, D]


# (position, grad, proposal, momentum, step_size, inv_mass, lane_steps) -> both
# trajectories (jump_move.transition): a device runs them in one submission.
MovedTrajectoryFn = Callable[
    [FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, IntArray],
    MovedTrajectories,
]


@dataclass(frozen=True)
class Priors:
    """Priors of the K-state Gaussian HMM, on returns divided by their robust scale.

    After scaling, a typical return is O(1), so these are stated in units of "one robust sd".
    """

    # Regime means: a bar's drift is a few hundredths of its sd (daily ~0.05, minute
    # ~0.005), so N(0, 0.1^2) is still weak for real drifts, yet it stops the two states
    # from splitting a one-regime window by mean instead of by volatility.
    mu_loc: float = 0.0
    mu_scale: float = 0.1
    # log sd of the calmest state: the calm regime sits a little below the pooled robust sd.
    log_sigma_loc: float = -0.3
    log_sigma_scale: float = 1.0
    # eta_k = log(sigma_k / sigma_{k-1} - 1): a regime is a materially different volatility.
    # loc log 2 is a median ratio of 3 between neighbouring states; scale 0.5 spans ratios
    # ~1.75 to ~6 (95%), so a window showing one regime leaves the turbulent state unused
    # (P(turbulent) near 0 in every chain) rather than splitting calm bars into two states.
    eta_loc: float = 0.6931471805599453
    eta_scale: float = 0.5
    # Sticky Dirichlet rows: prior mean stay probability 20/21 ~ 0.95 (regimes last ~20 bars)
    # so a lone outlier is not explained by a one-bar regime switch; 21 pseudo-transitions
    # per row are still outweighed by the ~255 transitions of a 256-bar window.
    alpha_stay: float = 20.0
    alpha_move: float = 1.0

    def __post_init__(self) -> None:
        for name in ("mu_scale", "log_sigma_scale", "eta_scale", "alpha_stay", "alpha_move"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"Priors.{name} must be a positive finite number, got {value!r}")


class PredictiveBatch(NamedTuple):
    """Per lane, the model's view of the next bar: what the strategy reads."""

    filtered_last: FloatArray  # [L, K] P(regime at the last bar | y)
    mean: FloatArray  # [L] mean of the next (scaled) return
    var: FloatArray  # [L] variance of the next (scaled) return
