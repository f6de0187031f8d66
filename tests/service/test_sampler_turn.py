"""The worker loop's step after each bar (service/worker/sampler_turn.py): the WAL copied
back, then the sampler between bars, which waits for the other accounts' bars: a worker
holds the state directory's `bar-turns.lock` shared while its bar's update runs, and a
sampler waits until it can take it exclusively, for a bounded time. The other account
is a real process holding the lock; the order of events is read from the one monotonic
clock every process of a machine shares, never from a delay."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise
from multiprocessing.synchronize import Event
from pathlib import Path

import pytest
from structlog.testing import capture_logs
from test_state_store import checkpoint
from test_trader import Rig

from service.bench.daemon_harness import LIGHT_EFFORT, two_account_settings, write_config
from service.config_loader import load_config
from service.state.store import StateStore
from service.worker import assembly
from service.worker.sampler_turn import AfterBarStep, BarTurns, copy_wal_back

DEADLINE_S = 60.0  # for a process to start on a loaded machine; never reached when right
ctx = mp.get_context("spawn")


def hold_a_bar(state_dir: Path, holding: Event, release: Event, released_at: object) -> None:
    """Another account's worker in its bar's update until `release`; notes the monotonic
    time just before it lets go (the waiter cannot have the lock before that)."""
    turns = BarTurns(state_dir)
    with turns.bar():
        holding.set()
        release.wait(DEADLINE_S)
        released_at.value = time.monotonic()  # type: ignore[attr-defined]


@contextmanager
def another_bar(state_dir: Path) -> Iterator[tuple[Event, object]]:
    holding, release = ctx.Event(), ctx.Event()
    released_at = ctx.Value("d", 0.0)
    other = ctx.Process(target=hold_a_bar, args=(state_dir, holding, release, released_at))
    other.start()
    try:
        assert holding.wait(DEADLINE_S), "the other worker never took its bar's lock"
        yield release, released_at
    finally:
        release.set()
        other.join(DEADLINE_S)


def never() -> bool:
    return False


def test_a_sampler_gives_up_at_its_limit_or_a_stop_while_another_bar_runs(
    tmp_path: Path,
) -> None:
    turns = BarTurns(tmp_path)
    with another_bar(tmp_path):
        assert turns.wait_for_bars(0.0, never) is False
        assert turns.wait_for_bars(DEADLINE_S, lambda: True) is False  # a stop ends it
    assert turns.wait_for_bars(0.0, never) is True  # that bar is over
    turns.close()


def test_a_sampler_goes_once_the_other_bar_is_over(tmp_path: Path) -> None:
    turns = BarTurns(tmp_path)
    with another_bar(tmp_path) as (release, released_at):
        done: list[tuple[bool, float]] = []
        waiter = threading.Thread(
            target=lambda: done.append((turns.wait_for_bars(DEADLINE_S, never),
                                        time.monotonic())))  # fmt: skip
        waiter.start()
        release.set()
        waiter.join(DEADLINE_S)
    [(clear, at)] = done
    assert clear and at > released_at.value  # type: ignore[attr-defined]
    turns.close()


def test_a_workers_own_finished_bar_does_not_hold_its_sampler(tmp_path: Path) -> None:
    turns = BarTurns(tmp_path)
    with turns.bar():
        pass
    assert turns.wait_for_bars(0.0, never) is True
    assert (tmp_path / "bar-turns.lock").exists()
    turns.close()


@pytest.mark.parametrize("limit_s", [0.0, 5.0])
def test_no_other_worker_no_wait(tmp_path: Path, limit_s: float) -> None:
    turns = BarTurns(tmp_path)
    assert turns.wait_for_bars(limit_s, never) is True
    turns.close()


def wal_sizes(tmp_path: Path, copy_back: bool, between: bool, bars: int = 10) -> list[int]:
    """The state's WAL file size after each of `bars` updates of a real trader (sampling
    between bars or at the bar), with or without the worker loop's step after the bar
    (AfterBarStep.run)."""
    effort = f"{LIGHT_EFFORT}sample_between_bars = {str(between).lower()}\n"
    config = load_config(write_config(tmp_path, two_account_settings(effort=effort)))
    rig = Rig(config, tmp_path / "state")
    rig.trader.resume()
    clock = assembly.build_clock(config, rig.market, config.instruments.symbols("alpha"),
                                 rig.first, rig.store)  # fmt: skip
    turn = AfterBarStep(rig.trader, BarTurns(tmp_path), clock, config.settings.supervision,
                       lambda allowance_s: None)  # fmt: skip
    wal = rig.store.path.with_name(rig.store.path.name + "-wal")
    sizes = []
    try:
        for n in range(bars):
            rig.trader.update(rig.bar(n))
            if copy_back:
                turn.run(rig.bar(n), threading.Event())
            sizes.append(wal.stat().st_size)
    finally:
        rig.close()
    return sizes


@pytest.mark.parametrize("between", [True, False], ids=["between-bars", "at-the-bar"])
def test_after_each_bar_the_wal_is_copied_back_and_the_next_commit_starts_it_afresh(
    tmp_path: Path, between: bool
) -> None:
    """Copied back after each bar's update (service/state/wal_backfill.py), the WAL holds
    one update's pages: SQLite's own copy at 1,000 pages, inside some update's COMMIT,
    never comes, and no COMMIT grows the file. Without the step it grows bar by bar."""
    copied = wal_sizes(tmp_path / "copied", copy_back=True, between=between)
    kept = wal_sizes(tmp_path / "kept", copy_back=False, between=between)
    assert copied == [copied[0]] * len(copied)  # the cold update's size, the largest
    assert all(later > size for size, later in pairwise(kept[2:]))
    assert kept[-1] > 3 * copied[0]


def test_a_copy_that_fails_is_logged_and_the_worker_goes_on(tmp_path: Path) -> None:
    """Another connection holding the write lock (an operator's shell in a transaction):
    the copy's restart write waits out the busy timeout (5 s) and fails. The worker's
    step says so (`state.backfill_failed`, with SQLite's reason) and raises nothing: the
    next checkpoint's COMMIT meets the same lock and fails with what to do."""
    path = tmp_path / "alpha.sqlite"
    store = StateStore(path)
    store.commit_update(checkpoint(1), [], [])  # frames in the WAL to copy
    other = sqlite3.connect(path, timeout=0)
    other.execute("BEGIN IMMEDIATE")
    with capture_logs() as logs:
        copy_wal_back(store)
    [failed] = [e for e in logs if e["event"] == "state.backfill_failed"]
    assert "database is locked" in failed["reason"] and "later checkpoint" in failed["next"]
    other.rollback()
    copy_wal_back(store)  # the lock gone, the copy goes through and says nothing
    store.close()
