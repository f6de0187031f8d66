"""Named fault-injection points, for the crash, hang and chaos tests.

A fault is `ACTION@POINT[:N][#ACCOUNT]`: at the N-th time (counting from 1 in this
process; every time without N) the worker of ACCOUNT (every worker without it) passes
POINT, it does ACTION: `kill` (SIGKILL itself), `exit` (exit 99 at once), `hang` (block
the main loop for good), `fail` (raise an I/O error there, as a full disk or a failing
device would) or `pause` (log `fault.paused`, then hold the main loop until the worker is
asked to stop: a test signals it at that exact moment; only at points the trading loop
passes, once `watch_stop` has armed it). Points, in the order an update passes them:
`start` (before resuming),
`after_resend` (a resend at start-up, between its POST and recording its answer),
`update`, `model` (inside the model update: new chain states computed, not yet kept;
with [model] sample_between_bars, after the commit and orders, once the sampler between
bars has run, its chains not yet kept),
`before_checkpoint`, `in_commit` (inside the checkpoint transaction, before COMMIT),
`after_checkpoint` (committed, before any POST), `before_post` (before each POST; an
update's batch to a batch broker is one), `after_post` (between each POST and recording its
answer), `reload` (applying a new
configuration), `warming` (in the cold warm-up thread, before a warm-up: `pause` there
holds the warm-up, not the loop). `POINTS` lists them. They come from
$REGIME_TRADER_FAULTS, which the command line accepts only together with
REGIME_TRADER_TESTING=1: production never runs with faults.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
from collections import Counter
from dataclasses import dataclass

import structlog

FAULTS_ENV = "REGIME_TRADER_FAULTS"
TESTING_ENV = "REGIME_TRADER_TESTING"
PAUSE_SLICE_S = 0.1  # how often a paused worker lets pending signal handlers run
ACTIONS = ("kill", "exit", "hang", "fail", "pause")
POINTS = (
    "start", "after_resend", "update", "model", "before_checkpoint", "in_commit",
    "after_checkpoint", "before_post", "after_post", "reload", "warming",
)
EXIT_FAULT = 99
log = structlog.get_logger("service.worker")


class FaultSpecError(ValueError):
    """A fault specification that cannot be parsed or is not allowed here."""


@dataclass(frozen=True)
class Fault:
    action: str
    point: str
    nth: int | None
    account: str | None


def parse_faults(text: str) -> tuple[Fault, ...]:
    return tuple(_parse_one(part.strip()) for part in text.split(",") if part.strip())


def _parse_one(text: str) -> Fault:
    spec, _, account = text.partition("#")
    action, _, where = spec.partition("@")
    point, _, nth = where.partition(":")
    if action not in ACTIONS or not point or (nth and not nth.isdigit()):
        raise FaultSpecError(
            f"fault {text!r} must look like ACTION@POINT[:N][#ACCOUNT] with ACTION in "
            f"{', '.join(ACTIONS)}"
        )
    return Fault(action, point, int(nth) if nth else None, account or None)


def faults_from_env(env: dict[str, str]) -> tuple[str, ...]:
    """The fault specs to run with; refuses them outside a test run."""
    text = env.get(FAULTS_ENV, "").strip()
    if not text:
        return ()
    if env.get(TESTING_ENV) != "1":
        raise FaultSpecError(
            f"{FAULTS_ENV} is set but {TESTING_ENV}=1 is not: refusing to "
            "inject faults outside a test run; unset it"
        )
    parse_faults(text)  # refuse a malformed one at start-up, not in a worker
    return tuple(p.strip() for p in text.split(",") if p.strip())


class FaultPoints:
    """Counts passes through each named point and fires the configured faults."""

    def __init__(self, specs: tuple[str, ...] = (), account: str | None = None) -> None:
        faults = parse_faults(",".join(specs))
        self.faults = tuple(f for f in faults if f.account in (None, account))
        self._passes: Counter[str] = Counter()
        self._stop: threading.Event | None = None

    def watch_stop(self, stop: threading.Event) -> None:
        """Arm `pause`: it holds until this event is set (by a stop signal)."""
        self._stop = stop

    def hit(self, point: str) -> None:
        if not self.faults:
            return
        self._passes[point] += 1
        for fault in self.faults:
            if fault.point == point and fault.nth in (None, self._passes[point]):
                if fault.action == "pause":
                    self._pause(point)
                else:
                    _fire(fault.action, point)

    def _pause(self, point: str) -> None:
        if self._stop is None:
            raise FaultSpecError(f"pause@{point}: this point is passed before the trading "
                                 "loop arms pause; pick a point inside an update")
        log.warning("fault.paused", point=point, until="a stop is asked for")
        # A signal handler (SIGTERM, SIGINT) or the parent's death sets it. The kernel may
        # deliver the signal to another thread (the warm-up runner, the pipe watcher): its
        # Python handler then runs only when this thread returns to the interpreter, so
        # wait in short slices rather than once (one wait missed a SIGINT for the whole
        # shutdown budget).
        while not self._stop.wait(PAUSE_SLICE_S):
            pass


class InjectedFailure(sqlite3.OperationalError):
    """The `fail` action: an I/O error at a named point (a test-only fault)."""


def _fire(action: str, point: str) -> None:
    if action == "fail":
        raise InjectedFailure(f"disk I/O error (injected at {point})")
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if action == "exit":
        os._exit(EXIT_FAULT)
    while True:  # hang: a blocked main loop that no signal handler can release
        threading.Event().wait(3600)
