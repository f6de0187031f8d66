"""The worker loop's step after each bar (AfterBarStep): the state's WAL copied back into
its file (copy_wal_back), then the sampler between bars, which runs after its own bar's
update, once no other account's bar update is running, and so that it still ends before
its next bar.

With [model] sample_between_bars each update's MCMC runs after its commit. The accounts'
workers share one machine's cores (or its GPU), so an account that committed first and
started its sampler took them from the accounts still on their bar, and lengthened the
round (docs/benchmarks.md, thirty-second session). So a worker holds a shared flock on
the state directory's `bar-turns.lock` while its bar's update runs, and its sampler first
takes that lock exclusively for an instant, which it gets once no bar's update holds it.
It only tries (non-blocking, every POLL_S), never queuing for the lock, so a bar never
waits for a sampler. The wait is bounded: it ends where a sampler as long as the last
one would no longer end before the next bar (at once on a fast clock), or at a stop; an
account that hangs mid-update delays the others' samplers, never their bars.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import structlog

from service.clock import Clock
from service.settings_ops import SupervisionSettings
from service.state.errors import StateError
from service.state.paths import TURNS_NAME
from service.state.store import StateStore
from service.worker.deferred_gc import deferred_collection
from service.worker.trader import Trader

log = structlog.get_logger("service.worker")

POLL_S = 0.005  # between tries of the exclusive lock: a bar's update takes 20 ms or more


class BarTurns:
    """The state directory's `bar-turns.lock`, as one worker holds it."""

    def __init__(self, state_dir: Path) -> None:
        self.fd = os.open(state_dir / TURNS_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    @contextlib.contextmanager
    def bar(self) -> Iterator[None]:
        """Held (shared) while this account's bar update runs."""
        fcntl.flock(self.fd, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def wait_for_bars(self, limit_s: float, stop: Callable[[], bool]) -> bool:
        """Until no account's bar update runs (True), or `limit_s` has passed or `stop()`
        says so first (False)."""
        deadline = time.monotonic() + limit_s
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline or stop():
                    return False
                time.sleep(POLL_S)
            else:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
                return True

    def close(self) -> None:
        os.close(self.fd)


class AfterBarStep:
    """The worker loop's step after each bar, at its turn: the state's WAL copied back
    into its file (service/state/wal_backfill.py), then the sampler between bars."""

    def __init__(
        self, trader: Trader, turns: BarTurns, clock: Clock, supervision: SupervisionSettings,
        beat: Callable[[float], None],
    ) -> None:  # fmt: skip
        self.trader, self.turns, self.clock, self.beat = trader, turns, clock, beat
        self.budget_s = supervision.update_budget_s
        self.allowance_s = supervision.startup_budget_s  # the first follows a cold update
        self.last_s = 0.0

    def run(self, after: datetime, stop: threading.Event) -> None:
        """The WAL's copy and the sampler of the update at bar `after`, at the turn (the
        copy at once where the worker does not sample between bars); neither when
        stopping (a stopped worker's next start samples that window first, and closing
        the database copies the WAL)."""
        if stop.is_set():
            return
        if self.trader.between is None:
            copy_wal_back(self.trader.store)
            return
        until_bar = self.clock.seconds_until_bar_after(after)
        limit_s = 0.0 if until_bar is None else max(0.0, until_bar - self.last_s)
        self.beat(limit_s + self.allowance_s)
        started = time.monotonic()
        self.turns.wait_for_bars(limit_s, stop.is_set)
        if stop.is_set():
            return
        copy_wal_back(self.trader.store)  # like the sampler, off the other accounts' bars
        sampling = time.monotonic()
        with deferred_collection():  # as an update: no collector pause inside it
            self.trader.sample_between_bars(sampling - started)
        self.last_s = time.monotonic() - sampling
        self.allowance_s = max(self.budget_s, 10 * self.last_s)


def copy_wal_back(store: StateStore) -> None:
    """The WAL copied back after a bar's update, so that the next update's COMMIT starts
    it afresh (the worker loop's step, and `bench stages` after each update). One that
    fails costs nothing but this copy (SQLite copies inside a COMMIT at 1,000 pages, as it
    did before), and what made it fail fails that COMMIT too, which says so."""
    try:
        store.backfill_wal()
    except StateError as error:
        log.warning("state.backfill_failed", reason=str(error),
                    next="nothing to do: a later checkpoint's COMMIT copies it; if "
                    "the database cannot be written, that checkpoint fails and says why")
