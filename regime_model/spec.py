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
    # With 4 chains x 40 draws, the worst of 2D rank R-hats of healthy chains lands at
    # 1.03-1.09 by sampling noise alone; 1.1 still flags stuck or multimodal chains.
    rhat_max: float = 1.1
    priors: Priors = field(default_factory=Priors)
    max_divergences: int = 2  # per instrument per update, over all chains
    target_accept: float = 0.8
    steps_min: int = 3
    steps_max: int = 6
    trajectory: str = "jitter"  # "chees": adapt each instrument's trajectory length
    # Blocks of `draws` more an unconverged instrument may run within one update.
    extend_max: int = 1
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
        if self.trajectory not in ("jitter", "chees"):
            raise ValueError(f"ModelSpec.trajectory: jitter or chees, not {self.trajectory!r}")
        if not 0.0 < self.target_accept < 1.0:
            raise ValueError(f"ModelSpec.target_accept must be in (0, 1), got {self.target_accept}")
