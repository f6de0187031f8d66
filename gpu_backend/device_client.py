"""A worker's backend whose warm runs go to the shared device (device_server.py).

Everything else (cold lanes, a wide instrument's predictive, the host driver's kernels)
runs on the worker's own backend, as without a shared device. A warm run sent to the
server is the bits of the same run on the worker's own device (the join changes no lane:
regime_model/batch_join.py), so a checkpoint does not depend on where its update ran.
Where the server cannot be reached, does not answer within `timeout_s`, or reports a
failed run, the worker runs the batch itself and tries the server again `retry_s` later:
the shared device is never a reason for an update to fail.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from multiprocessing.connection import Client, Connection
from typing import Any

import structlog

from gpu_backend.device_traffic import NO_TRAFFIC, Traffic
from gpu_backend.result_transfer import expand
from regime_model.backend import Backend, UpdateBatch
from regime_model.batch_join import joins
from regime_model.sampler import SampleResult
from regime_model.types import FloatArray, IntArray, PredictiveBatch, Priors, Trajectory

log = structlog.get_logger("gpu_backend.device_client")


class SharedDeviceBackend:
    """`local`'s numerics; its warm runs on the shared device at `address`."""

    def __init__(self, local: Backend, address: str, authkey: bytes, account: str,
                 timeout_s: float = 30.0, retry_s: float = 5.0) -> None:  # fmt: skip
        self.local, self.address, self._authkey, self.account = local, address, authkey, account
        self.timeout_s, self.retry_s = timeout_s, retry_s
        self._conn: Connection | None = None
        self._retry_at = 0.0
        self._ident = 0
        self._bar: float | None = None
        self._told_unreachable = False
        self.served_runs = 0  # warm runs the server made for this worker
        self._shared = NO_TRAFFIC  # this worker's share of the server's device traffic
        self.own_runs = 0  # warm runs this worker made itself (server away or failing)

    # -- the Backend protocol: the worker's own numerics --------------------------------

    @property
    def name(self) -> str:
        return self.local.name

    @property
    def adapter(self) -> str:
        return self.local.adapter

    @property
    def numerics(self) -> str:
        return self.local.numerics

    def hmm_value_and_grad(self, theta: FloatArray, y: FloatArray, n_states: int,
                           priors: Priors) -> tuple[FloatArray, FloatArray]:  # fmt: skip
        return self.local.hmm_value_and_grad(theta, y, n_states, priors)

    def hmm_predictive(self, theta: FloatArray, y: FloatArray, n_states: int,
                       draws_per_row: int = 1) -> PredictiveBatch:  # fmt: skip
        return self.local.hmm_predictive(theta, y, n_states, draws_per_row)

    def hmm_predictive_and_likelihood(
        self, theta: FloatArray, y: FloatArray, n_states: int, draws_per_row: int = 1
    ) -> tuple[PredictiveBatch, FloatArray]:
        return self.local.hmm_predictive_and_likelihood(theta, y, n_states, draws_per_row)

    def leapfrog(self, theta: FloatArray, momentum: FloatArray, grad: FloatArray,
                 step_size: FloatArray, inv_mass: FloatArray, lane_steps: IntArray,
                 y: FloatArray, n_states: int, priors: Priors) -> Trajectory:  # fmt: skip
        return self.local.leapfrog(theta, momentum, grad, step_size, inv_mass, lane_steps, y,
                                   n_states, priors)  # fmt: skip

    def __getattr__(self, name: str) -> Any:  # the local backend's optional parts
        return getattr(self.local, name)

    # -- warm runs on the shared device -------------------------------------------------

    def runs_on_device(self, batch: UpdateBatch) -> bool:
        """Whether `run_update` runs the batch in one device run: as the worker's own
        device would, so that a batch the server does not take runs the same way here."""
        own = getattr(self.local, "runs_on_device", None)
        return own is not None and bool(own(batch))

    @contextlib.contextmanager
    def update_turn(self, bar: float) -> Iterator[None]:
        """One update of bar `bar` (epoch seconds): its runs wait for the other workers'
        of the same bar; at the end the server stops waiting for this worker."""
        self._bar = bar
        try:
            yield
        finally:
            self._bar = None
            if self._conn is not None:
                try:
                    self._conn.send(("end", bar))
                except (OSError, ValueError) as error:
                    self._drop(error)

    def run_update(self, batch: UpdateBatch) -> SampleResult:
        """A batch that may join others' (batch_join.joins: warm lanes of one update's
        window) on the shared device; the rest, and anything it cannot run, here."""
        if joins(batch) and (conn := self._connection()) is not None:
            try:
                result = self._remote(conn, batch)
            except (OSError, EOFError, TimeoutError) as error:
                self._drop(error)
            else:
                if result is not None:
                    self.served_runs += 1
                    return result
        if joins(batch):
            self.own_runs += 1
        return self.local.run_update(batch)

    def _remote(self, conn: Connection, batch: UpdateBatch) -> SampleResult | None:
        self._ident += 1
        conn.send(("run", self._ident, self._bar, batch))
        if not conn.poll(self.timeout_s):
            raise TimeoutError(f"no answer from the shared device in {self.timeout_s:g} s")
        _, ident, result, error, traffic = conn.recv()
        if ident != self._ident:
            raise OSError(f"answer {ident} to request {self._ident}: the stream is out of step")
        if error is not None:
            log.warning("device.shared_run_failed", account=self.account, reason=error,
                        next="this worker runs the batch on its own device")  # fmt: skip
            return None
        assert isinstance(result, SampleResult)
        self._shared = Traffic(*(a + b for a, b in zip(self._shared, traffic, strict=True)))
        return expand(result)

    def take_shared_traffic(self) -> Traffic:
        """The server's device traffic for this worker's served runs since the last take:
        each run's submissions (shared with the workers it was joined with) and its share
        of the bytes uploaded, by lanes (backend_traffic.take_traffic adds it)."""
        taken, self._shared = self._shared, NO_TRAFFIC
        return taken

    def connect(self) -> bool:
        """Reach the server now (else at the first warm run); whether it answered."""
        return self._connection() is not None

    def _connection(self) -> Connection | None:
        if self._conn is not None or time.monotonic() < self._retry_at:
            return self._conn
        try:
            conn = Client(self.address, family="AF_UNIX", authkey=self._authkey)
            conn.send(("hello", self.account))
            if not conn.poll(self.timeout_s):
                raise TimeoutError(f"no hello from the shared device in {self.timeout_s:g} s")
            _, adapter, numerics = conn.recv()
        except (OSError, EOFError, TimeoutError) as error:
            self._retry_at = time.monotonic() + self.retry_s
            if not self._told_unreachable:
                log.warning("device.shared_unreachable", account=self.account,
                            address=self.address, reason=f"{type(error).__name__}: {error}",
                            next=f"runs on this worker's own device; retried every "
                                 f"{self.retry_s:g} s")  # fmt: skip
                self._told_unreachable = True
            return None
        log.info("device.shared_connected", account=self.account, address=self.address,
                 adapter=adapter, numerics=numerics)  # fmt: skip
        self._conn, self._told_unreachable = conn, False
        return conn

    def _drop(self, error: BaseException) -> None:
        log.warning("device.shared_lost", account=self.account,
                    reason=f"{type(error).__name__}: {error}",
                    next=f"runs on this worker's own device; retried in {self.retry_s:g} s")
        if self._conn is not None:
            with contextlib.suppress(OSError):
                self._conn.close()
        self._conn, self._retry_at = None, time.monotonic() + self.retry_s

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(OSError):
                self._conn.close()
            self._conn = None


def device_turn(backend: Backend, bar: float) -> contextlib.AbstractContextManager[None]:
    """`backend.update_turn(bar)` where the backend is a shared device's client, else
    nothing: the trader's one line for either."""
    turn = getattr(backend, "update_turn", None)
    return turn(bar) if turn is not None else contextlib.nullcontext()
