"""The wgpu backend: regime_model.posterior's value-and-gradient and predictive in WGSL.

Same meaning as the numpy reference (priors and Jacobians included), float32 arithmetic
with per-step scaling, sums over time accumulated in f64 where the adapter has
`shader-f64` (else compensated f32). Inputs are validated before the device is touched;
lanes beyond one dispatch's binding limits are split into consecutive dispatches.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from gpu_backend.clock_wake import ClockWake
from gpu_backend.kernel_inputs import validate
from gpu_backend.lane_threads import threads_per_lane
from gpu_backend.shaders.accumulate import Accumulate
from gpu_backend.shaders.hmm import ENTRY_PREDICTIVE, ENTRY_VALUE_GRAD
from gpu_backend.wgpu_device import Device, open_device
from gpu_backend.wgpu_inputs import HALF_LOG_2PI, constant_terms, time_major
from gpu_backend.wgpu_kernels import F32, HmmKernels, Launch, Result
from gpu_backend.wgpu_lane_sampler import LaneSampler
from gpu_backend.wgpu_leapfrog import End, LeapfrogKernels, Start
from gpu_backend.wgpu_sampler import DeviceSampler, fits
from regime_model.backend import PredictiveBatch, UpdateBatch, run_on_host
from regime_model.jump_move import moved_by_parts
from regime_model.params import MAX_STATES, MIN_STATES
from regime_model.sampler import SampleResult
from regime_model.types import FloatArray, IntArray, MovedTrajectories, Priors, Trajectory

ALL_STATES = tuple(range(MIN_STATES, MAX_STATES + 1))
WORKGROUP = 64
_DEFAULT_PRIORS = Priors()


class WgpuBackend:
    """The Backend protocol on one wgpu device (created here unless given)."""

    name = "wgpu"

    def __init__(
        self,
        device: Device | None = None,
        *,
        accumulate: Accumulate | None = None,
        profile: bool = False,
        device_update: bool = True,
        lane_threads: int | None = None,
        fuse_moves: bool | None = None,
        wake_clocks: bool | None = None,
        subgroups: bool | None = None,
    ) -> None:
        self.device = device if device is not None else open_device()
        if accumulate is None:
            accumulate = "f64" if "shader-f64" in self.device.info.features else "kahan"
        lane_threads, sampler_threads = threads_per_lane(self.device.info, lane_threads)
        self.kernels = HmmKernels(self.device, ALL_STATES, WORKGROUP, accumulate, profile,
                                  lane_threads)  # fmt: skip
        self.trajectories = LeapfrogKernels(self.kernels)
        # A warm batch's whole run in one submission: one dispatch with a workgroup per lane
        # (wgpu_lane_sampler) where scan kernels are on, else a dispatch per step
        # (wgpu_sampler); device_update=False: the host driver.
        self.sampler = DeviceSampler(self.kernels) if device_update else None
        self.lane_sampler = (
            LaneSampler(self.kernels, ALL_STATES, sampler_threads, subgroups)
            if device_update and sampler_threads else None
        )  # fmt: skip
        # The host driver's move and trajectory in one submission (`_moved_leapfrog`): on a
        # GPU, where a submission's round trip costs more than twice the lanes; a CPU
        # adapter (lavapipe) pays for the speculative lanes in full, so it runs them apart.
        if fuse_moves is None:
            fuse_moves = self.device.info.adapter_type != "CPU"
        self.moved_leapfrog: Callable[..., MovedTrajectories] | None = (
            self._moved_leapfrog if fuse_moves else None
        )
        # A GPU's clocks are raised just before each bar (clock_wake.py); a CPU has none.
        if wake_clocks is None:
            wake_clocks = self.device.info.adapter_type != "CPU"
        self.clock_wake = ClockWake() if wake_clocks else None
        # y, (block, copies), y_tm blocks
        self._packed: tuple[FloatArray, tuple[int, int], list[F32]] | None = None

    @property
    def adapter(self) -> str:
        return self.device.info.adapter

    @property
    def numerics(self) -> str:
        sums = "f64" if self.kernels.accumulate == "f64" else "kahan-f32"
        return f"float32 (sums over time: {sums})"

    def inject_fault(self, reason: str = "injected fault: simulated device loss") -> None:
        """Test hook: the next GPU call raises as a lost device would."""
        self.kernels.fault = reason

    def hmm_value_and_grad(
        self, theta: FloatArray, y: FloatArray, n_states: int, priors: Priors
    ) -> tuple[FloatArray, FloatArray]:
        theta, y = validate(theta, y, n_states)
        out = self._launch(ENTRY_VALUE_GRAD, theta, y, n_states, theta.shape[1], priors)
        value = out.value[:, 0].astype(np.float64) + out.value[:, 1]
        const = constant_terms(n_states, y.shape[1], priors)
        return value + const, out.vec.astype(np.float64)

    def hmm_predictive(
        self, theta: FloatArray, y: FloatArray, n_states: int, draws_per_row: int = 1
    ) -> PredictiveBatch:
        return self.hmm_predictive_and_likelihood(theta, y, n_states, draws_per_row)[0]

    def hmm_predictive_and_likelihood(
        self, theta: FloatArray, y: FloatArray, n_states: int, draws_per_row: int = 1
    ) -> tuple[PredictiveBatch, FloatArray]:
        theta, y = validate(theta, y, n_states, draws_per_row)
        K = n_states
        out = self._launch(ENTRY_PREDICTIVE, theta, y, K, K + 2, _DEFAULT_PRIORS, draws_per_row)
        vec = out.vec.astype(np.float64)
        # the kernel's forward filter leaves out each bar's -log(2 pi) / 2 (constant_terms)
        ll = out.value[:, 0].astype(np.float64) + out.value[:, 1] - y.shape[1] * HALF_LOG_2PI
        return PredictiveBatch(vec[:, :K], vec[:, K], vec[:, K + 1]), ll

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
        """lane_steps[l] leapfrog steps from (theta, momentum, grad) in ONE submission per
        dispatch-sized block of lanes: `regime_model.hmc`'s trajectory, float32 on the device.

        Returns (theta, momentum, log density, gradient) at the ends, unsanitised: a faulted
        lane shows non-finite values, for the caller to judge.
        """
        theta, y = validate(theta, y, n_states)
        with np.errstate(all="ignore"):  # the opening half kick, as on the host
            half_kicked = momentum + 0.5 * np.asarray(step_size)[:, None] * grad
        end = self._trajectories(theta, half_kicked, step_size, inv_mass, lane_steps, y,
                                 n_states, priors)  # fmt: skip
        return self._as_trajectory(end, y.shape[1], n_states, priors)

    def _moved_leapfrog(
        self,
        theta: FloatArray,
        grad: FloatArray,
        proposal: FloatArray,
        momentum: FloatArray,
        step_size: FloatArray,
        inv_mass: FloatArray,
        lane_steps: IntArray,
        y: FloatArray,
        n_states: int,
        priors: Priors,
    ) -> MovedTrajectories:
        """A transition's two candidate trajectories round a move not yet decided
        (jump_move.transition), in ONE submission: lanes [0, L) from `theta`, kicked on the
        host as `leapfrog` does, lanes [L, 2L) from the proposals, whose gradient the
        submission computes first and keeps (wgpu_leapfrog's `opening`). Where 2L lanes
        exceed one dispatch: the move's density call, then both trajectories."""
        theta, y = validate(theta, y, n_states)
        L, D = theta.shape
        if self.kernels.max_lanes(n_states, y.shape[1], D) < 2 * L:
            return moved_by_parts(partial(self.hmm_value_and_grad, y=y, n_states=n_states,
                                          priors=priors),
                                  partial(self.leapfrog, y=y, n_states=n_states, priors=priors),
                                  theta, grad, proposal, momentum, step_size, inv_mass,
                                  lane_steps)  # fmt: skip
        with np.errstate(all="ignore"):
            kicked = momentum + 0.5 * np.asarray(step_size)[:, None] * grad

        def two(a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
            return np.concatenate([a, a if b is None else b])

        # The proposals' lanes enter with their momentum unkicked: the device kicks them.
        end = self._trajectories(two(theta, proposal), two(kicked, momentum), two(step_size),
                                 two(inv_mass), two(lane_steps), y, n_states, priors,
                                 opening=L)  # fmt: skip
        ran = self._as_trajectory(end, y.shape[1], n_states, priors)
        assert end.start_value is not None and end.start_grad is not None
        logp = end.start_value[:, 0].astype(np.float64) + end.start_value[:, 1]
        return MovedTrajectories(
            Trajectory(*(x[:L] for x in ran)), Trajectory(*(x[L:] for x in ran)),
            logp + constant_terms(n_states, y.shape[1], priors), end.start_grad.astype(np.float64),
        )  # fmt: skip

    def _trajectories(
        self,
        theta: FloatArray,
        kicked: FloatArray,
        step_size: FloatArray,
        inv_mass: FloatArray,
        lane_steps: IntArray,
        y: FloatArray,
        K: int,
        priors: Priors,
        opening: int | None = None,
    ) -> End:
        """The device's trajectories from `theta` with momentum `kicked` (lanes from
        `opening` on not yet kicked: then all in one block); y holds one row per lane of
        `theta`, or per lane of its first half when `opening` doubles the lanes."""
        L, D = theta.shape
        steps = np.broadcast_to(np.asarray(lane_steps, dtype=np.int64), (L,))
        eps = np.asarray(step_size, dtype=np.float64)[:, None]
        with np.errstate(all="ignore"):
            drift = eps * inv_mass
        lane = np.empty((L, 2), dtype=np.uint32)
        lane[:, 0] = eps[:, 0].astype(np.float32).view(np.uint32)
        lane[:, 1] = steps
        block = self.kernels.max_lanes(K, y.shape[1], D)
        ys = self._pack(y, block, copies=1 if opening is None else 2)
        f32 = np.float32
        ends = [
            self.trajectories.run(
                Start(K, ys[lo // block],
                      np.ascontiguousarray(theta[lo : lo + block], dtype=f32),
                      np.ascontiguousarray(kicked[lo : lo + block], dtype=f32),
                      np.ascontiguousarray(drift[lo : lo + block], dtype=f32),
                      lane[lo : lo + block]),
                priors, opening,
            )
            for lo in range(0, L, block)
        ]  # fmt: skip
        if len(ends) == 1:
            return ends[0]
        return End(*(np.concatenate(part) for part in list(zip(*ends, strict=True))[:4]))

    def _as_trajectory(self, end: End, T: int, K: int, priors: Priors) -> Trajectory:
        with np.errstate(all="ignore"):
            logp = end.value[:, 0].astype(np.float64) + end.value[:, 1]
            logp += constant_terms(K, T, priors)
        f64 = np.float64
        return Trajectory(
            end.theta.astype(f64), end.momentum.astype(f64), logp, end.grad.astype(f64)
        )

    def run_update(self, batch: UpdateBatch) -> SampleResult:
        """A warm batch in one submission (wgpu_sampler); any other batch (cold lanes,
        "chees", more lanes than one dispatch holds) through the host driver over these
        kernels: one submission per trajectory."""
        if self.sampler is not None and self.runs_on_device(batch):
            constant = constant_terms(batch.n_states, len(batch.y[0]), batch.priors)
            return (self.lane_sampler_for(batch) or self.sampler).run(batch, constant)
        return run_on_host(self, batch)

    def lane_sampler_for(self, batch: UpdateBatch) -> LaneSampler | None:
        """The one-dispatch sampler where `run_update` runs this batch with it, else None."""
        lane = self.lane_sampler
        runs = lane is not None and lane.fits(batch) and self.runs_on_device(batch)
        return lane if runs else None

    def runs_on_device(self, batch: UpdateBatch) -> bool:
        """Whether `run_update` runs this batch in one submission."""
        sampler = self.sampler
        return sampler is not None and fits(batch) is None and sampler.holds(batch)

    def _pack(self, y: FloatArray, block: int, copies: int = 1) -> list[F32]:
        """y (`copies` times over, lanes after lanes) time-major in float32 per block of
        lanes; reused while the sampler's y repeats (compared by value: a cheap check next
        to packing it again every trajectory)."""
        cached = self._packed
        if cached is not None and cached[1] == (block, copies) and np.array_equal(cached[0], y):
            return cached[2]
        lanes = np.concatenate([y] * copies) if copies > 1 else y
        packed = [
            np.ascontiguousarray(lanes[lo : lo + block].T, dtype=np.float32)
            for lo in range(0, len(lanes), block)
        ]
        self._packed = (y.copy(), (block, copies), packed)
        return packed

    def _launch(self, entry: str, theta: FloatArray, y: FloatArray, K: int, width: int,
                priors: Priors, per_row: int = 1) -> Result:  # fmt: skip
        L, T = len(theta), y.shape[1]
        step = self.kernels.max_lanes(K, T, width)
        # A density call packs y as the trajectories do (`_pack`: the host driver's move and
        # trajectory share it on the device). The predictive's rows, each read by `per_row`
        # lanes (a run's draws), go up once, whole rows per dispatch (not once per draw).
        if entry == ENTRY_VALUE_GRAD:
            ys = self._pack(y, step)
        elif per_row <= step:
            step -= step % per_row
            ys = [time_major(y, lo // per_row, min(lo + step, L) // per_row, 1)
                  for lo in range(0, L, step)]  # fmt: skip
        else:  # a row's lanes span dispatches: each gets its lanes' copies
            ys = [time_major(y, lo, min(lo + step, L), per_row) for lo in range(0, L, step)]
            per_row = 1
        f32 = np.float32
        parts = [self.kernels.run(Launch(entry, K, ys[lo // step],
                                         np.ascontiguousarray(theta[lo : lo + step], dtype=f32),
                                         width, per_row), priors)
                 for lo in range(0, L, step)]  # fmt: skip
        if len(parts) == 1:
            return parts[0]
        return Result(*(np.concatenate(p) for p in zip(*parts, strict=True)))
