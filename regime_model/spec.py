"""What one model update is: states, window, chains, warm-up, draws and the gates (ModelSpec)."""

from __future__ import annotations

from dataclasses import dataclass, field

from regime_model.params import check_states
from regime_model.types import Priors


@dataclass(frozen=True)
class ModelSpec:
    n_states: int = 2
    window: int = 256  # T returns per instrument
    chains: int = 4
    warmup_cold: int = 300  # iterations for an instrument with no carry
    warmup_warm: int = 15  # step-size re-adaptation when warm-started
    draws: int = 40  # kept draws per chain per update
    # The convergence gate (regime_model.estimate): the Monte Carlo standard error of the
    # posterior mean of P(turbulent), and of the mean log predictive sd (relative).
    mcse_max: float = 0.02
    vol_mcse_max: float = 0.05
    priors: Priors = field(default_factory=Priors)
    # Divergent transitions per instrument and update, as a share of its chains x draws:
    # 2 of the 160 of 4 chains x 40 draws, 16 of an extension block's 1,280.
    divergence_rate_max: float = 2 / 160
    target_accept: float = 0.8
    steps_min: int = 3
    steps_max: int = 6
    trajectory: str = "jitter"  # "chees": adapt each instrument's trajectory length
    # Effort follows need: an instrument that fails the gate, or whose window has two
    # readings (the level-shift move's acceptance at the draws above `two_readings`,
    # regime_model.readings), runs on within its update, up to `extend_max` blocks of
    # `extension_chains` chains started at its draws, each `extension_warmup` iterations
    # then `draws` draws; the last block's chains give its estimate.
    extend_max: int = 2
    two_readings: float = 1e-3
    extension_chains: int = 32
    extension_warmup: int = 15
    # regime_model.level_shift's move before every HMC transition: chains jump between the
    # two readings of a window at a regime change instead of waiting for HMC to cross
    # (one more density evaluation per iteration; docs/benchmarks.md measures both).
    shift_moves: bool = True

    def __post_init__(self) -> None:
        check_states(self.n_states)
        for name in ("window", "chains", "warmup_cold", "draws", "steps_min"):
            if getattr(self, name) < 1:
                raise ValueError(f"ModelSpec.{name} must be >= 1, got {getattr(self, name)}")
        if self.warmup_warm < 0 or self.steps_max < self.steps_min or self.draws < 4:
            raise ValueError("ModelSpec needs warmup_warm >= 0, steps_max >= steps_min, draws >= 4")
        if self.extend_max < 0:
            raise ValueError(f"ModelSpec.extend_max must be >= 0, got {self.extend_max}")
        if self.extension_chains < self.chains or self.extension_warmup < 0:
            raise ValueError(
                "ModelSpec.extension_chains must be >= chains (the carry keeps `chains` of "
                f"them) and extension_warmup >= 0, got {self.extension_chains} and "
                f"{self.extension_warmup}"
            )
        if not (self.mcse_max > 0 and self.vol_mcse_max > 0 and self.two_readings >= 0):
            raise ValueError("ModelSpec.mcse_max and vol_mcse_max must be > 0, two_readings >= 0")
        if self.trajectory not in ("jitter", "chees"):
            raise ValueError(f"ModelSpec.trajectory: jitter or chees, not {self.trajectory!r}")
        if not 0.0 < self.target_accept < 1.0:
            raise ValueError(f"ModelSpec.target_accept must be in (0, 1), got {self.target_accept}")
