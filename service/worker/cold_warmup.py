"""Cold warm-ups off the update's critical path.

An instrument without a carry (added live, or none in the checkpoint) needs a cold
warm-up (ModelSpec.warmup_cold iterations), about 20 times a warm update's work. Run in
the update, one such instrument would hold every other instrument of the account for as
long. So the trader hands cold instruments to a `ColdWarmup`: ONE background thread per
worker, which runs the same `refresh` on only those instruments, in their own batch, on
its own backend instance (backends keep per-shape device state and are not shared across
threads). The trader adopts finished carries at the start of an update, never mid-update
(`adopt`); the instrument is then warm and its carry re-adapts to the newer bars in the
normal warm update.

Why a thread and not a process (measured, docs/architecture.md): the spawn, imports and
device set-up of a helper process cost 1.8 s (numpy) to 8 s (wgpu on lavapipe) before any
work, while in a thread the concurrent warm updates ran 1.3 to 1.7 times slower on a
loaded 2-core machine (numpy and wgpu release the GIL in their kernels) and never stalled.
A thread also dies with its worker: nothing to reap.

Determinism: a job's result is a pure function of the window at hand-off and the seq of
the update that handed it off (the random streams that update would have used), never
of timing. WHEN it is adopted depends on timing; `model.ready` records both seqs, so a
replay is explainable. Crash safety: a warm-up in flight is never checkpointed; after a
restart the instrument has no carry and is simply handed off again.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import structlog

from gpu_backend import select_backend
from regime_model.backend import Backend
from regime_model.carry import carry_problem
from regime_model.params import n_params
from regime_model.types import FloatArray
from regime_model.update import InstrumentCarry, ModelSpec, refresh
from service.model_state import ModelState, instrument_key
from service.types import Symbol
from service.worker.fault_points import FaultPoints

log = structlog.get_logger("service.worker")


class WarmupJob(NamedTuple):
    symbols: tuple[Symbol, ...]
    returns: FloatArray  # [N, T]: each instrument's window at hand-off
    seq: int  # the update that handed it off: its random streams are the ones used


class WarmupDone(NamedTuple):
    job: WarmupJob
    carries: list[InstrumentCarry]
    converged: list[bool]  # the cold run's own gate (decision R-hat, divergences)
    iterations: int  # per chain: warm-up and draws
    gradient_evals: int
    seconds: float


class WarmupFailedError(RuntimeError):
    """A cold warm-up raised in the runner thread; re-raised in the trading loop."""


class ColdWarmup:
    """The runner: jobs in hand-off order, one at a time, each its own batch."""

    def __init__(
        self, spec: ModelSpec, seed: int, make_backend: Callable[[], Backend],
        faults: FaultPoints | None = None,
    ) -> None:
        self.spec, self.seed, self._make_backend = spec, seed, make_backend
        self._faults = faults or FaultPoints()
        self._jobs: queue.SimpleQueue[WarmupJob | None] = queue.SimpleQueue()
        self._done: queue.SimpleQueue[WarmupDone | BaseException] = queue.SimpleQueue()
        self._pending: set[Symbol] = set()  # handed off, not yet adopted (trading loop only)
        self._outstanding = 0  # jobs queued or running
        self._changed = threading.Condition()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    def pending(self) -> frozenset[Symbol]:
        return frozenset(self._pending)

    def hand_off(self, symbols: list[Symbol], returns: FloatArray, seq: int) -> None:
        """Queue a warm-up of `symbols` on these windows; returns at once."""
        self._pending.update(symbols)
        with self._changed:
            self._outstanding += 1
        self._jobs.put(WarmupJob(tuple(symbols), returns.copy(), seq))
        if self._thread is None:  # started on the first cold add: most workers never need it
            # in the caller's logging context, so its events carry the account and pid
            self._thread = threading.Thread(target=contextvars.copy_context().run,
                                            args=(self._run,), name="cold-warmup", daemon=True)
            self._thread.start()

    def take_done(self) -> list[WarmupDone]:
        """Finished warm-ups, in hand-off order; raises one that failed."""
        finished: list[WarmupDone] = []
        while not self._done.empty():
            item = self._done.get()
            if isinstance(item, BaseException):
                raise WarmupFailedError(f"cold warm-up failed: {item}; the worker restarts "
                                        "and hands the instruments off again") from item
            self._pending.difference_update(item.job.symbols)
            finished.append(item)
        return finished

    def wait_idle(self, timeout_s: float) -> bool:
        """True once no job is queued or running (a result may wait to be taken)."""
        with self._changed:
            return self._changed.wait_for(lambda: self._outstanding == 0, timeout_s)

    def close(self) -> None:
        """No job after the one in hand; that one is abandoned if the process ends."""
        self._closed.set()
        self._jobs.put(None)

    def _run(self) -> None:
        backend: Backend | None = None  # made in this thread, apart from the update's
        while (job := self._jobs.get()) is not None:
            try:
                self._faults.hit("warming")  # test-only: a crash with a warm-up in flight
                if not self._closed.is_set():
                    backend = backend or self._make_backend()
                    self._done.put(self._warm(job, backend))
            except Exception as error:  # the thread boundary: the trading loop raises it
                self._done.put(error)
            with self._changed:
                self._outstanding -= 1
                self._changed.notify_all()

    def _warm(self, job: WarmupJob, backend: Backend) -> WarmupDone:
        started = time.perf_counter()
        keys = np.array([instrument_key(s) for s in job.symbols], dtype=np.uint32)
        estimate, carries, info = refresh(
            returns=job.returns, carries=[None] * len(job.symbols), instrument_keys=keys,
            seq=job.seq, seed=self.seed, spec=self.spec, backend=backend,
        )
        return WarmupDone(job, carries, [bool(c) for c in estimate.converged],
                          self.spec.warmup_cold + self.spec.draws, info.gradient_evals,
                          time.perf_counter() - started)


def same_kind(backend: Backend) -> Callable[[], Backend]:
    """A new instance of the update's backend kind, for the runner's own use."""
    name = backend.name
    return lambda: select_backend(name)


def reset_unfit_carries(state: ModelState, ready: list[Symbol], spec: ModelSpec) -> None:
    """Drop the carries the model can no longer start from (a checkpoint of another
    `[model] chains`, `extension_chains` or `states`, found at resume): the instrument
    warms up again, apart, instead of the update refusing its batch at every bar."""
    D = n_params(spec.n_states)
    for symbol in ready:
        carry = state.instruments[symbol].carry
        if carry is None:
            continue
        problems = [carry_problem(carry, chains, D)
                    for chains in {spec.chains, spec.extension_chains}]  # fmt: skip
        if all(problems):
            state.instruments[symbol].carry = None
            log.warning("model.carry_reset", symbol=symbol, reason=problems[0])


def split_cold(
    state: ModelState, ready: list[Symbol], pending: frozenset[Symbol]
) -> tuple[list[Symbol], list[Symbol]]:
    """(warm, cold) of the update's ready instruments. While no instrument of the account
    has a carry (a cold start) there is no warm batch to protect: all run in the update,
    under the start-up allowance, as before. Those already warming are in neither."""
    instruments = state.instruments
    if not any(st.carry is not None for st in instruments.values()):
        return [s for s in ready if s not in pending], []
    warm = [s for s in ready if instruments[s].carry is not None]
    cold = [s for s in ready if instruments[s].carry is None and s not in pending]
    return warm, cold


def adopt(done: WarmupDone, state: ModelState, seq: int) -> None:
    """Take a finished warm-up's carries into the state, at the start of update `seq`."""
    job = done.job
    for symbol, carry, converged in zip(job.symbols, done.carries, done.converged, strict=True):
        instrument = state.instruments.get(symbol)
        if instrument is None or instrument.retiring or instrument.carry is not None:
            continue  # removed (or warmed otherwise) meanwhile: nothing to adopt
        instrument.carry = carry
        log.info("model.ready", symbol=symbol, converged=converged,
                 iterations=done.iterations, gradient_evals=done.gradient_evals,
                 seconds=round(done.seconds, 3), handed_off_at_seq=job.seq, adopted_at_seq=seq)
