"""The one interface a compute backend implements, and the types it speaks.

regime_model owns it; gpu_backend implements it (numpy, wgpu, the fallback between them)
and never the reverse; the service picks a backend and passes it in. A backend's unit of
work is one update's whole sampler run over a batch of lanes (`run_update`). Today every
backend runs it with regime_model's host driver over its own kernels (`run_on_host`); a
device-resident backend records the same algorithm into one submission instead.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple, Protocol

import numpy as np

from regime_model import hmc, level_shift, rng
from regime_model.sampler import LaneStart, SamplerConfig, SampleResult, sample
from regime_model.types import FloatArray, IntArray, PredictiveBatch, Priors, Trajectory

__all__ = ["Backend", "PredictiveBatch", "ReturnsWindow", "UpdateBatch", "run_on_host"]


class UpdateBatch(NamedTuple):
    """Everything one update's sampler run needs; lanes = instruments x chains."""

    y: FloatArray  # [L, T] scaled returns of each lane
    n_states: int
    priors: Priors
    start: LaneStart
    stream: rng.Stream  # each lane's randomness
    schedule: rng.Stream  # the batch-wide stream that draws the leapfrog step counts
    config: SamplerConfig
    # Where y comes from, when the batch is one update's (or one of its blocks'):
    # y = repeat(returns[rows] / scale[rows], C). A device backend keeps the returns on the
    # device, adds each new bar in place, and reads a block's instruments from there.
    window: ReturnsWindow | None = None
    # Each lane's row of `schedule` where the batch joins runs of several step schedules
    # (several accounts' updates: batch_join); None: one schedule, every lane its row 0.
    schedule_rows: IntArray | None = None


class ReturnsWindow(NamedTuple):
    """An account's returns before scaling; the batch's lanes are of instruments `rows`
    (None: all of them, in order), each repeated `chains` times."""

    returns: FloatArray  # [N, T] every instrument of the account
    scale: FloatArray  # [N]
    chains: int
    rows: IntArray | None = None  # [n] indices into returns' N, in lane order

    def instruments(self) -> IntArray:
        """The row of `returns` each group of `chains` lanes reads: `rows`, or all in order."""
        out: IntArray = np.arange(len(self.scale)) if self.rows is None else np.asarray(self.rows)
        return out


class Backend(Protocol):
    """Batched HMM numerics on some device. Lanes are independent; y is already scaled.

    name: registry name ("numpy", "wgpu"); adapter: the device it runs on; numerics: the
    float type of its arithmetic ("float64", "float32"). All three are recorded with every
    update so a checkpoint says what produced it.
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

    def hmm_predictive(
        self, theta: FloatArray, y: FloatArray, n_states: int, draws_per_row: int = 1
    ) -> PredictiveBatch:
        """Filtered last-bar regime and next-return mixture moments for each lane of theta
        [L, D]; lane l reads row l // draws_per_row of y [L / draws_per_row, T] (a run's
        draws share their chain's window: estimate.py passes each once, not S times)."""
        ...

    def hmm_predictive_and_likelihood(
        self, theta: FloatArray, y: FloatArray, n_states: int, draws_per_row: int = 1
    ) -> tuple[PredictiveBatch, FloatArray]:
        """hmm_predictive, and each lane's log likelihood log p(y) [L] (float64, the
        Gaussian's normaliser included) from the same forward filter: what reweighting a
        run's draws to another window reads (regime_model.reweigh)."""
        ...

    def leapfrog(
        self,
        theta: FloatArray,
        momentum: FloatArray,
        grad: FloatArray,
        step_size: FloatArray,
        inv_mass: FloatArray,
        lane_steps: IntArray,
        y: FloatArray,
        n_states: int,
        priors: Priors,
    ) -> Trajectory:
        """lane_steps[l] leapfrog steps of `hmc.host_leapfrog`'s math for each lane."""
        ...

    def run_update(self, batch: UpdateBatch) -> SampleResult:
        """The batch's whole sampler run: every lane's warm-up, then its draws."""
        ...


def run_on_host(backend: Backend, batch: UpdateBatch) -> SampleResult:
    """`Backend.run_update` as regime_model's host driver over `backend`'s kernels."""
    if batch.schedule_rows is not None:
        raise ValueError(
            "run_on_host: this batch joins several step schedules (batch_join.join), which "
            "only a device sampler runs; run its parts apart (batch_join.run_together does)"
        )
    y, K, priors = batch.y, batch.n_states, batch.priors
    # A backend that runs a move's two candidate trajectories in one call (a GPU: one
    # submission instead of two) offers `moved_leapfrog`; it is None or absent elsewhere.
    moved = getattr(backend, "moved_leapfrog", None)
    density = hmc.FusedDensity(
        partial(backend.hmm_value_and_grad, y=y, n_states=K, priors=priors),
        partial(backend.leapfrog, y=y, n_states=K, priors=priors),
        None if moved is None else partial(moved, y=y, n_states=K, priors=priors),
    )
    jump = level_shift.move_for(K, batch.config.shift_moves)
    return sample(density, batch.start, batch.stream, batch.schedule, batch.config, jump=jump)
