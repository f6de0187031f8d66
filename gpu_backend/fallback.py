"""A Backend that runs on the GPU while it works and on numpy while it does not.

If the adapter is missing, or a GPU call fails (device lost, validation error, an injected
fault), `backend.fallback` is logged with the reason, the call is redone on the CPU
backend and the caller never sees the failure. The GPU is retried `retry_after_s` later
with a fresh device (a lost device does not come back). name / adapter / numerics are
those of the backend that served the latest call, so every update says what produced it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import structlog

from gpu_backend.wgpu_device import GpuCallError, GpuUnavailableError
from regime_model.backend import Backend, PredictiveBatch, UpdateBatch, run_on_host
from regime_model.jump_move import moved_by_parts
from regime_model.sampler import SampleResult
from regime_model.types import FloatArray, IntArray, MovedTrajectories, Priors, Trajectory

if TYPE_CHECKING:  # typing only: the factory, not this module, opens the device
    from gpu_backend.wgpu_backend import WgpuBackend

log = structlog.get_logger("gpu_backend.fallback")

RETRY_AFTER_S = 300.0


class FallbackBackend:
    def __init__(
        self,
        gpu_factory: Callable[[], WgpuBackend],
        cpu: Backend,
        *,
        retry_after_s: float = RETRY_AFTER_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._factory = gpu_factory
        self.cpu = cpu
        self._retry_after_s = retry_after_s
        self._clock = clock
        self.gpu: WgpuBackend | None = None
        self._retry_at = clock()
        self.fallbacks = 0
        self._served: Backend = self._current_gpu() or cpu

    @property
    def name(self) -> str:
        return self._served.name

    @property
    def adapter(self) -> str:
        return self._served.adapter

    @property
    def numerics(self) -> str:
        return self._served.numerics

    def expect_work_in(self, seconds: float) -> None:
        """The next update is due in `seconds`: the GPU, if in use, raises its clocks just
        before (its clock_wake; none on a CPU adapter)."""
        wake = self.gpu.clock_wake if self.gpu is not None else None
        if wake is not None:
            wake.expect_work_in(seconds)

    def expect_no_more_work(self) -> None:
        wake = self.gpu.clock_wake if self.gpu is not None else None
        if wake is not None:
            wake.close()

    def inject_gpu_fault(self, reason: str = "injected fault: simulated device loss") -> None:
        """Test hook: make the next GPU call fail (no-op while on the CPU)."""
        if self.gpu is not None:
            self.gpu.inject_fault(reason)

    def hmm_value_and_grad(
        self, theta: FloatArray, y: FloatArray, n_states: int, priors: Priors
    ) -> tuple[FloatArray, FloatArray]:
        out: tuple[FloatArray, FloatArray] = self._either("hmm_value_and_grad", theta, y,
                                                          n_states, priors)  # fmt: skip
        return out

    def hmm_predictive(
        self, theta: FloatArray, y: FloatArray, n_states: int, draws_per_row: int = 1
    ) -> PredictiveBatch:
        out: PredictiveBatch = self._either("hmm_predictive", theta, y, n_states, draws_per_row)
        return out

    def hmm_predictive_and_likelihood(
        self, theta: FloatArray, y: FloatArray, n_states: int, draws_per_row: int = 1
    ) -> tuple[PredictiveBatch, FloatArray]:
        out: tuple[PredictiveBatch, FloatArray] = self._either(
            "hmm_predictive_and_likelihood", theta, y, n_states, draws_per_row)
        return out

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
        """A whole trajectory in one GPU submission, else the CPU backend's trajectory."""
        out: Trajectory = self._either("leapfrog", theta, momentum, grad, step_size, inv_mass,
                                       lane_steps, y, n_states, priors)  # fmt: skip
        return out

    def _either(self, method: str, *args: Any) -> Any:
        """The GPU's `method`(*args), else (no GPU now, or the call failed on it: fall back)
        the CPU backend's; whichever answers serves until the next call."""
        gpu = self._current_gpu()
        if gpu is not None:
            try:
                result = getattr(gpu, method)(*args)
            except GpuCallError as error:
                self._fall_back(method, str(error))
            else:
                self._served = gpu
                return result
        self._served = self.cpu
        return getattr(self.cpu, method)(*args)

    @property
    def moved_leapfrog(self) -> Callable[..., MovedTrajectories] | None:
        """The GPU's move and trajectory in one submission, where it fuses them (read once
        per host-driven run by run_on_host); a failed call is redone on the CPU."""
        gpu = self._current_gpu()
        return None if gpu is None or gpu.moved_leapfrog is None else self._moved_leapfrog

    def _moved_leapfrog(
        self, *args: Any, y: FloatArray, n_states: int, priors: Priors
    ) -> MovedTrajectories:
        gpu = self._current_gpu()
        if gpu is not None and gpu.moved_leapfrog is not None:
            try:
                result = gpu.moved_leapfrog(*args, y=y, n_states=n_states, priors=priors)
            except GpuCallError as error:
                self._fall_back("moved_leapfrog", str(error))
            else:
                self._served = gpu
                return result
        self._served = self.cpu
        cpu = self.cpu
        return moved_by_parts(partial(cpu.hmm_value_and_grad, y=y, n_states=n_states,
                                      priors=priors),
                              partial(cpu.leapfrog, y=y, n_states=n_states, priors=priors),
                              *args)  # fmt: skip

    def run_update(self, batch: UpdateBatch) -> SampleResult:
        """A warm batch in the GPU's one submission (a failure redoes the update on the
        CPU); any other through the host driver over this object, so a failure redoes
        one call, not the update."""
        gpu = self._current_gpu()
        if gpu is not None and gpu.runs_on_device(batch):
            try:
                result = gpu.run_update(batch)
            except GpuCallError as error:
                self._fall_back("run_update", str(error))
            else:
                self._served = gpu
                return result
        return run_on_host(self, batch)

    def runs_on_device(self, batch: UpdateBatch) -> bool:
        """Whether the GPU, while it works, runs this batch in one submission."""
        gpu = self._current_gpu()
        return gpu is not None and gpu.runs_on_device(batch)

    def _current_gpu(self) -> WgpuBackend | None:
        if self.gpu is None and self._clock() >= self._retry_at:
            try:
                self.gpu = self._factory()
            except GpuUnavailableError as error:
                self._fall_back("open_device", str(error))
        return self.gpu

    def _fall_back(self, call: str, reason: str) -> None:
        self.gpu = None  # dropped: a failed device is rebuilt from scratch on retry
        self.fallbacks += 1
        self._retry_at = self._clock() + self._retry_after_s
        log.warning(
            "backend.fallback",
            call=call,
            reason=reason,
            to=self.cpu.name,
            retry_in_s=self._retry_after_s,
        )
