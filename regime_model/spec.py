"""What one model update is: states, window, chains, warm-up, draws and the gates (ModelSpec)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

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
    # Leapfrog steps per iteration, uniform on [min, max], the same for every lane of a
    # batch: a warm update's (steps_*, and its run-on blocks'), and a batch of instruments
    # that all start cold (cold_steps_*). At 3-6 the slowest instruments' warm chains
    # moved by random walk; at 4-8 the slowest of 268 has 3x the ESS for 1.26x the warm
    # update's gradients, fewer instruments run on, and the gate passes as many. Longer
    # still buys more ESS per gradient for the slowest but costs every instrument's run:
    # the trial round took 1.2x at 5-10 and 1.9x at 8-16 (docs/benchmarks.md,
    # twenty-fourth session). A cold warm-up keeps 3-6: its 300 iterations are the cold
    # round's length.
    steps_min: int = 4
    steps_max: int = 8
    cold_steps_min: int = 3
    cold_steps_max: int = 6
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
    # [model] sample_between_bars: the sampler between bars runs on until its Monte Carlo
    # errors are within this share of the gate's bounds (its estimate is still judged by
    # the gate itself). Reweighting to the next bar's window widens them, by 1 / sqrt(the
    # weights' ESS share) and by the posterior's move; an instrument it pushes over the
    # gate runs the bar's sampler. At 0.6 the H200's trial accounts sent 22 instruments to
    # the bar in 60 account-updates against 71 at 1 (warm round p50 47-50 ms against 54);
    # on a CPU the longer sampler costs more than that saves: the embedded default's took
    # 2.8-2.9 s against 1.3-1.5, past its 2 s pace (docs/benchmarks.md, thirty-third
    # session). So 1 by default; at_risk_margin runs on the instruments at risk alone, and
    # with it 0.6 is slower on the H200 too: 34.6 ms against 21.1-24.8 (thirty-sixth).
    between_bars_margin: float = 1.0
    # Between bars, an instrument whose reweighing to the next bar would fail the gate its
    # draws pass (regime_model.at_risk) runs on to this share of it, or to a half or a
    # quarter of it where its worst probe asks; 1: never. On the trial shape (lavapipe)
    # 0.6 alone halved the warm round (19 sent to the bar in 25 account-updates against
    # 50) for 30 % more sampling between bars; the probes' shares cut it to 67-70 ms (10
    # sent in 55) for 22-25 % more again; the embedded default, whose 2 s pace that
    # sampling outran, sets 1 (docs/benchmarks.md, thirty-fourth and thirty-fifth sessions).
    # On the H200 the trial round's p50 21.1-24.8 ms, p99 39.9-43.9 (thirty-sixth session).
    at_risk_margin: float = 0.6

    def within(self, share: float) -> ModelSpec:
        """This spec with the gate's bounds at `share` of its own: what a sampler run on to a
        margin stops at (service/worker/between_bars.py)."""
        return replace(self, mcse_max=share * self.mcse_max,
                       vol_mcse_max=share * self.vol_mcse_max)  # fmt: skip

    def __post_init__(self) -> None:
        check_states(self.n_states)
        for name in ("window", "chains", "warmup_cold", "draws", "steps_min", "cold_steps_min"):
            if getattr(self, name) < 1:
                raise ValueError(f"ModelSpec.{name} must be >= 1, got {getattr(self, name)}")
        if self.warmup_warm < 0 or self.steps_max < self.steps_min or self.draws < 4:
            raise ValueError("ModelSpec needs warmup_warm >= 0, steps_max >= steps_min, draws >= 4")
        if self.cold_steps_max < self.cold_steps_min:
            raise ValueError("ModelSpec needs cold_steps_max >= cold_steps_min, got "
                             f"{self.cold_steps_min}..{self.cold_steps_max}")  # fmt: skip
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
        if not 0.0 < self.at_risk_margin <= 1.0:
            raise ValueError(f"ModelSpec.at_risk_margin must be in (0, 1], got "
                             f"{self.at_risk_margin}")  # fmt: skip
        if not 0.0 < self.between_bars_margin <= 1.0:
            raise ValueError("ModelSpec.between_bars_margin must be in (0, 1], got "
                             f"{self.between_bars_margin}")  # fmt: skip
        if self.trajectory not in ("jitter", "chees"):
            raise ValueError(f"ModelSpec.trajectory: jitter or chees, not {self.trajectory!r}")
        if not 0.0 < self.target_accept < 1.0:
            raise ValueError(f"ModelSpec.target_accept must be in (0, 1), got {self.target_accept}")
