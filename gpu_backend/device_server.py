"""One device serving every account's warm runs: the server side of the shared device.

Five worker processes, each with its own device context, time-slice one GPU: each
account's run of 54 instruments takes 6-7 ms alone on the H200 and about 30 in the round.
Their warm batches joined into one dispatch (regime_model.batch_join: each lane keeps its
own account's returns, streams and step schedule, so every run is the bits of the run
alone) take 11-16 ms for all five (docs/benchmarks.md, twenty-fifth session). This server
holds the one device; workers send it their warm batches (device_client.py) and it runs
what arrives together as one.

Gathering. A request names its bar (the update's bar time). When a worker's first batch
of a bar arrives the server waits, at most `gather_s` past it, for the other workers that
have neither sent a batch of that bar nor ended its update (a worker says so after each
update), then runs every pending batch at once. A worker's later blocks of the same
update (its run-on) wait likewise, at most `gather_s`, for the workers of the bar that
may still send a block of the same stage: inside the bar (its first batch sent, its
update not ended) and not past that stage. (The twenty-fifth session found that wait
cost 7.5 ms a block, the workers that ran on nothing ending only after their host
summary; with the wide instruments summarised on the device a worker ends about 2 ms
after its reply, and the blocks that do come run as one instead of one after another:
docs/benchmarks.md, twenty-eighth session.) Replies go out on a thread each, so that no
worker waits for the others' replies to be pickled and written. Nothing here changes any
run's numbers, only when it runs.
"""

from __future__ import annotations

import collections
import contextlib
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, Listener
from typing import Any, NamedTuple

import numpy as np
import structlog

from gpu_backend.backend_traffic import take_traffic
from gpu_backend.device_traffic import Traffic
from gpu_backend.result_transfer import compact
from regime_model.backend import Backend, UpdateBatch
from regime_model.batch_join import joinable, split_run

log = structlog.get_logger("gpu_backend.device_server")

GATHER_S = 0.01  # the longest a request waits for the other workers of its bar


@dataclass(eq=False)
class _Client:
    conn: Connection
    account: str
    ended: float = float("-inf")  # the last bar whose update the worker ended
    sent: float = float("-inf")  # the last bar of which the worker sent a batch
    stage: int = 0  # how many batches of that bar it sent before its last (0: its first)
    pending: list[_Request] = field(default_factory=list)


class _Request(NamedTuple):
    client: _Client
    ident: int
    bar: float | None  # the update's bar time (epoch seconds); None: do not wait
    batch: UpdateBatch
    arrived: float
    stage: int  # its batches of this bar before this one (0: the first; k: run-on block k)

    @property
    def first(self) -> bool:
        """The worker's first batch of this bar."""
        return self.bar is not None and self.stage == 0


class Gathering(NamedTuple):
    """One run of what was pending: how many batches, their lanes, whether it holds a
    worker's first batch of a bar, whether they ran joined (one device run) or one after
    another, the longest wait, the run's wall ms."""

    batches: int
    lanes: int
    first: bool  # it holds a worker's first batch of its bar (else only later blocks)
    joined: bool
    wait_ms: float
    run_ms: float


RECENT = 10_000  # gatherings kept for the figures: hours of bars


def _reply(request: _Request, result: Any, failed: str | None, share: Traffic) -> None:
    """One worker's answer: its run (float32 where exact) or why it failed, and its share
    of the device traffic. A worker gone meanwhile: its reader thread reports the leave."""
    with contextlib.suppress(OSError, ValueError):
        reply = None if result is None else compact(result)
        request.client.conn.send(("result", request.ident, reply, failed, share))


class DeviceServer:
    """Serves `backend`'s warm runs to the workers that connect to `listener`."""

    def __init__(self, backend: Backend, gather_s: float = GATHER_S) -> None:
        self.backend, self.gather_s = backend, gather_s
        self._events: queue.Queue[tuple[str, _Client, Any]] = queue.Queue()
        self.clients: list[_Client] = []
        self.gatherings = 0  # times the server ran what was pending (joined where it could)
        self.batches = 0  # batches served (a run serves one or more)
        self.recent: collections.deque[Gathering] = collections.deque(maxlen=RECENT)
        self._open: set[Connection] = set()  # every worker connection, from its accept on
        self._open_lock = threading.Lock()
        # replies written side by side: pickling and writing a trial account's draws takes
        # milliseconds, which the last of five workers waited for one after another
        self._replies = ThreadPoolExecutor(max_workers=8, thread_name_prefix="device-reply")

    def serve(self, listener: Listener, stop: threading.Event) -> None:
        """Until `stop`: accept workers (a thread), read them (a thread each), run here."""
        threading.Thread(target=self._accept, args=(listener, stop), daemon=True,
                         name="device-accept").start()  # fmt: skip
        while not stop.is_set():
            try:
                self._apply(*self._events.get(timeout=0.2))
            except queue.Empty:
                continue
            self._gather_and_run()
        self._replies.shutdown(wait=False)

    def _accept(self, listener: Listener, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                conn = listener.accept()
            except Exception as error:  # a bad key or a peer gone: on to the next one
                if not stop.is_set():
                    log.warning("device.refused", reason=f"{type(error).__name__}: {error}")
                    stop.wait(0.1)  # not a busy loop where accepting fails for a while
                continue
            with self._open_lock:
                self._open.add(conn)
            threading.Thread(target=self._read, args=(conn,), daemon=True,
                             name="device-client").start()  # fmt: skip

    def _read(self, conn: Connection) -> None:
        client = None
        try:
            kind, account = conn.recv()
            if kind != "hello":
                raise ValueError(f"expected hello, got {kind!r}")
            client = _Client(conn, str(account))
            # joined before the worker hears back: once connected it is waited for
            self._events.put(("join", client, None))
            conn.send(("hello", self.backend.adapter, self.backend.numerics))
            while True:
                message = conn.recv()
                self._events.put((message[0], client, message[1:]))
        except (EOFError, OSError, ValueError, TypeError):
            if client is not None:
                self._events.put(("leave", client, None))
            with self._open_lock:
                self._open.discard(conn)
            conn.close()

    def close_connections(self) -> None:
        """Every worker's connection closed, as when this process ends: each worker runs
        its batches itself until it reaches a server again."""
        with self._open_lock:
            connections, self._open = list(self._open), set()
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.close()

    def _apply(self, kind: str, client: _Client, body: Any) -> None:
        if kind == "join":
            self.clients.append(client)
            log.info("device.client_joined", account=client.account, clients=len(self.clients))
        elif kind == "leave" and client in self.clients:
            self.clients.remove(client)
            log.info("device.client_left", account=client.account, clients=len(self.clients))
        elif kind == "end":
            client.ended = max(client.ended, float(body[0]))
        elif kind == "run":
            ident, bar, batch = body
            first = bar is not None and float(bar) > client.sent
            if bar is not None:
                client.stage = 0 if first else client.stage + 1
                client.sent = max(client.sent, float(bar))
            client.pending.append(_Request(client, ident, bar, batch, time.monotonic(),
                                           client.stage))  # fmt: skip

    def _expected(self, bar: float, stage: int) -> bool:
        """Whether a connected worker may still send a batch of `bar`'s update at `stage`
        (0: its first batch; k: its k-th run-on block): it has not ended the bar, has none
        pending, and has not sent that stage's batch of the bar yet."""
        return any(not c.pending and c.ended < bar
                   and (c.sent < bar or (c.sent == bar and c.stage < stage))
                   for c in self.clients)  # fmt: skip

    def _gather_and_run(self) -> None:
        pending = [r for c in self.clients for r in c.pending]
        if not pending:
            return
        timed = [r for r in pending if r.bar is not None]
        if timed:  # a bar's batch waits for the others' batches of its stage
            bar = max(float(r.bar) for r in timed if r.bar is not None)
            stage = max(r.stage for r in timed if r.bar == bar)
            deadline = min(r.arrived for r in pending) + self.gather_s
            while self._expected(bar, stage) and (left := deadline - time.monotonic()) > 0:
                try:
                    self._apply(*self._events.get(timeout=left))
                except queue.Empty:
                    break
        self._run([r for c in self.clients for r in c.pending])

    def _run(self, requests: list[_Request]) -> None:
        for request in requests:
            request.client.pending.clear()
        if not requests:
            return
        started = time.monotonic()
        batches = [r.batch for r in requests]
        take_traffic(self.backend)  # what came before is not this run's
        replies: list[tuple[Any, str | None]]
        try:
            joined = joinable(self.backend, batches)
            if joined is None:
                results = [self.backend.run_update(b) for b in batches]
            else:
                results = split_run(self.backend.run_update(joined), batches, "each")
        except Exception as error:  # told to each worker, which then runs its batch itself
            reason = f"{type(error).__name__}: {error}"
            log.error("device.run_failed", reason=reason, batches=len(requests))
            replies = [(None, reason)] * len(requests)
        else:
            waits = [1e3 * (started - r.arrived) for r in requests]
            replies = [(result._replace(timings_ms={**result.timings_ms, "device_wait": wait}),
                        None) for wait, result in zip(waits, results, strict=True)]  # fmt: skip
            self.record(Gathering(len(batches), sum(len(b.y) for b in batches),
                                  any(r.first for r in requests), joined is not None, max(waits),
                                  1e3 * (time.monotonic() - started)))  # fmt: skip
        traffic, lanes = take_traffic(self.backend), sum(len(b.y) for b in batches)
        sends = []
        for request, (result, failed) in zip(requests, replies, strict=True):
            # each its run's submissions and its lanes' share of the bytes uploaded
            share = Traffic(traffic.submissions,
                            round(traffic.upload_bytes * len(request.batch.y) / max(lanes, 1)))
            sends.append(self._replies.submit(_reply, request, result, failed, share))
        for sent in sends:  # each worker has this one request out: all answered before more
            sent.result()

    def record(self, gathering: Gathering) -> None:
        self.gatherings += 1
        self.batches += gathering.batches
        self.recent.append(gathering)
        log.debug("device.gathered", **gathering._asdict())

    def figures(self) -> dict[str, float | int]:
        """The recent gatherings' figures, for `device.stopped`: how many ran joined, and
        for those with a worker's first batch of a bar (`first_`) and the rest (`later_`)
        their batches, lanes, longest wait for the bar's others and the run's wall ms."""
        recent = list(self.recent)
        out: dict[str, float | int] = {"gatherings": self.gatherings, "batches": self.batches,
                                       "joined": sum(g.joined for g in recent)}  # fmt: skip
        for kind, first in (("first", True), ("later", False)):
            these = [g for g in recent if g.first == first]
            for name in ("batches", "lanes", "wait_ms", "run_ms"):
                values = np.array([getattr(g, name) for g in these], dtype=np.float64)
                if len(values):
                    out[f"{kind}_{name}_p50"] = round(float(np.percentile(values, 50)), 3)
                    out[f"{kind}_{name}_max"] = round(float(values.max()), 3)
        return out
