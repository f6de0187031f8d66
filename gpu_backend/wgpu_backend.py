"""The wgpu backend: regime_model.posterior's value-and-gradient and predictive in WGSL.

Same meaning as the numpy reference (priors and Jacobians included), float32 arithmetic
with per-step scaling, sums over time accumulated in f64 where the adapter has
`shader-f64` (else compensated f32). Inputs are validated before the device is touched;
lanes beyond one dispatch's binding limits are split into consecutive dispatches.
"""

from __future__ import annotations

import math

import numpy as np

from gpu_backend.shaders.accumulate import Accumulate
from gpu_backend.shaders.hmm import ENTRY_PREDICTIVE, ENTRY_VALUE_GRAD
from gpu_backend.wgpu_device import Device, open_device
from gpu_backend.wgpu_kernels import F32, HmmKernels, Launch, Result
from gpu_backend.wgpu_lane_sampler import LaneSampler
from gpu_backend.wgpu_leapfrog import End, LeapfrogKernels, Start
from gpu_backend.wgpu_sampler import DeviceSampler, fits
from regime_model.backend import PredictiveBatch, UpdateBatch, run_on_host
from regime_model.params import MAX_STATES, MIN_STATES, check_states, n_params
from regime_model.sampler import SampleResult
from regime_model.types import FloatArray, IntArray, Priors, Trajectory

HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
ALL_STATES = tuple(range(MIN_STATES, MAX_STATES + 1))
WORKGROUP = 64
# Threads per lane of the scan kernels and the one-dispatch sampler on a GPU; a CPU adapter
# (lavapipe) runs a thread per lane, where the scan's barriers cost more than they save
# (docs/benchmarks.md, "The kernel: threads per lane").
LANE_THREADS = 64
_DEFAULT_PRIORS = Priors()


def validate(theta: FloatArray, y: FloatArray, K: int) -> tuple[FloatArray, FloatArray]:
    """theta [L, D(K)] and y [L, T] as float64, or ValueError naming what is wrong."""
    check_states(K)
    theta, y = np.asarray(theta, dtype=np.float64), np.asarray(y, dtype=np.float64)
    D = n_params(K)
    if theta.ndim != 2 or theta.shape[1] != D:
        raise ValueError(f"theta must be [L, {D}] for K={K}, got shape {theta.shape}")
    if y.ndim != 2 or y.shape[0] != theta.shape[0] or y.shape[1] < 1:
        raise ValueError(f"y must be [L={theta.shape[0]}, T>=1], got shape {y.shape}")
    return theta, y


def constant_terms(K: int, T: int, priors: Priors) -> float:
    """What the kernels leave out: -T/2 log 2pi and the normal priors' normalisers."""
    normal = (
        K * -math.log(priors.mu_scale)
        - math.log(priors.log_sigma_scale)
        + (K - 1) * -math.log(priors.eta_scale)
        - 2 * K * HALF_LOG_2PI
    )
    return normal - T * HALF_LOG_2PI


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
    ) -> None:
        self.device = device if device is not None else open_device()
        if accumulate is None:
            accumulate = "f64" if "shader-f64" in self.device.info.features else "kahan"
        if lane_threads is None:
            lane_threads = 0 if self.device.info.adapter_type == "CPU" else LANE_THREADS
        self.kernels = HmmKernels(
            self.device, ALL_STATES, WORKGROUP, accumulate, profile, lane_threads
        )
        self.trajectories = LeapfrogKernels(self.kernels)
        # A warm batch's whole run in one submission: one dispatch with a workgroup per lane
        # (wgpu_lane_sampler) where scan kernels are on, else a dispatch per step
        # (wgpu_sampler); device_update=False: the host driver.
        self.sampler = DeviceSampler(self.kernels) if device_update else None
        self.lane_sampler = (
            LaneSampler(self.kernels, ALL_STATES) if device_update and lane_threads else None
        )
        self._packed: tuple[FloatArray, int, list[F32]] | None = None  # y, block, y_tm blocks

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

    def hmm_predictive(self, theta: FloatArray, y: FloatArray, n_states: int) -> PredictiveBatch:
        theta, y = validate(theta, y, n_states)
        K = n_states
        raw = self._launch(ENTRY_PREDICTIVE, theta, y, K, K + 2, _DEFAULT_PRIORS).vec
        out: FloatArray = raw.astype(np.float64)
        return PredictiveBatch(out[:, :K], out[:, K], out[:, K + 1])

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
        L, D = theta.shape
        steps = np.broadcast_to(np.asarray(lane_steps, dtype=np.int64), (L,))
        eps = np.asarray(step_size, dtype=np.float64)[:, None]
        with np.errstate(all="ignore"):
            half_kicked = momentum + 0.5 * eps * grad  # the opening half kick, as on the host
            drift = eps * inv_mass
            lane = np.empty((L, 2), dtype=np.uint32)
            lane[:, 0] = eps[:, 0].astype(np.float32).view(np.uint32)
            lane[:, 1] = steps
            block = self.kernels.max_lanes(n_states, y.shape[1], D)
            ys = self._pack(y, block)
            ends = [
                self.trajectories.run(
                    Start(
                        n_states,
                        ys[lo // block],
                        np.ascontiguousarray(theta[lo : lo + block], dtype=np.float32),
                        np.ascontiguousarray(half_kicked[lo : lo + block], dtype=np.float32),
                        np.ascontiguousarray(drift[lo : lo + block], dtype=np.float32),
                        lane[lo : lo + block],
                    ),
                    priors,
                )
                for lo in range(0, L, block)
            ]
        end = ends[0] if len(ends) == 1 else End(*map(np.concatenate, zip(*ends, strict=True)))
        with np.errstate(all="ignore"):
            logp = end.value[:, 0].astype(np.float64) + end.value[:, 1]
            logp += constant_terms(n_states, y.shape[1], priors)
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
            if self.lane_sampler is not None and self.lane_sampler.fits(batch):
                return self.lane_sampler.run(batch, constant)
            return self.sampler.run(batch, constant)
        return run_on_host(self, batch)

    def runs_on_device(self, batch: UpdateBatch) -> bool:
        """Whether `run_update` runs this batch in one submission."""
        sampler = self.sampler
        return sampler is not None and fits(batch) is None and sampler.holds(batch)

    def _pack(self, y: FloatArray, block: int) -> list[F32]:
        """y time-major in float32 per block of lanes; reused while the sampler's y repeats
        (compared by value: a cheap check next to packing it again every trajectory)."""
        cached = self._packed
        if cached is not None and cached[1] == block and np.array_equal(cached[0], y):
            return cached[2]
        packed = [
            np.ascontiguousarray(y[lo : lo + block].T, dtype=np.float32)
            for lo in range(0, len(y), block)
        ]
        self._packed = (y.copy(), block, packed)
        return packed

    def _launch(
        self, entry: str, theta: FloatArray, y: FloatArray, K: int, width: int, priors: Priors
    ) -> Result:
        L, T = y.shape
        step = self.kernels.max_lanes(K, T, width)
        # A density call packs y as the trajectories do (`_pack`): the host driver
        # alternates a move's density call and a trajectory on the same y, which then
        # stays on the device instead of going up twice per iteration. (The predictive's
        # y, every lane repeated per draw, is used once: packed apart, not cached.)
        if entry == ENTRY_VALUE_GRAD:
            ys = self._pack(y, step)
        else:
            ys = [np.ascontiguousarray(y[lo : lo + step].T, dtype=np.float32)
                  for lo in range(0, L, step)]  # fmt: skip
        parts = [
            self.kernels.run(
                Launch(
                    entry,
                    K,
                    ys[lo // step],
                    np.ascontiguousarray(theta[lo : lo + step], dtype=np.float32),
                    width,
                ),
                priors,
            )
            for lo in range(0, L, step)
        ]
        if len(parts) == 1:
            return parts[0]
        return Result(*(np.concatenate(p) for p in zip(*parts, strict=True)))
