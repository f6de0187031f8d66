"""Clocks: a fast clock hands out one bar per call; a paced clock maps wall onto market time."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from service.clock import ClockError, FastClock, PacedClock, wall_clock

MINUTE = timedelta(minutes=1)
T0 = datetime(2024, 3, 1, 14, 30, tzinfo=UTC)
WALL0 = datetime(2030, 1, 1, tzinfo=UTC)


class FakeWall:
    """Wall time that moves only when the test moves it."""

    def __init__(self, t: datetime) -> None:
        self.t = t

    def __call__(self) -> datetime:
        return self.t


def test_fast_clock_hands_out_exactly_one_interval_after_the_given_time() -> None:
    clock, stop = FastClock(MINUTE), threading.Event()
    assert clock.wait_for_bar_after(T0, stop) == T0 + MINUTE
    assert clock.wait_for_bar_after(T0 + MINUTE, stop) == T0 + 2 * MINUTE
    assert clock.latest_bar() == T0 + 2 * MINUTE


def test_fast_clock_has_no_latest_bar_before_its_first_use() -> None:
    with pytest.raises(ClockError, match="before any wait_for_bar_after"):
        FastClock(MINUTE).latest_bar()


def test_fast_clock_returns_none_past_its_end_and_keeps_the_last_bar() -> None:
    clock, stop = FastClock(MINUTE, end=T0 + MINUTE), threading.Event()
    assert clock.wait_for_bar_after(T0, stop) == T0 + MINUTE
    assert clock.wait_for_bar_after(T0 + MINUTE, stop) is None
    assert clock.latest_bar() == T0 + MINUTE


def test_fast_clock_returns_none_once_stopped() -> None:
    stop = threading.Event()
    stop.set()
    assert FastClock(MINUTE).wait_for_bar_after(T0, stop) is None


def test_clocks_refuse_naive_times_and_non_positive_intervals() -> None:
    with pytest.raises(ValueError, match="naive datetime"):
        FastClock(MINUTE).wait_for_bar_after(datetime(2024, 1, 1), threading.Event())  # noqa: DTZ001
    with pytest.raises(ClockError, match="must be positive"):
        FastClock(timedelta(0))
    with pytest.raises(ClockError, match="at least one microsecond"):
        PacedClock(MINUTE, 0.0, T0, WALL0)


def test_paced_clock_advances_one_bar_per_pace_of_wall_time() -> None:
    wall = FakeWall(WALL0)
    clock = PacedClock(MINUTE, 0.5, market_anchor=T0, wall_anchor=WALL0, now=wall)
    assert clock.latest_bar() == T0
    wall.t = WALL0 + timedelta(seconds=0.499999)
    assert clock.latest_bar() == T0
    wall.t = WALL0 + timedelta(seconds=0.5)
    assert clock.latest_bar() == T0 + MINUTE
    wall.t = WALL0 + timedelta(seconds=10.2)
    assert clock.latest_bar() == T0 + 20 * MINUTE


def test_paced_clock_before_its_anchor_gives_earlier_bars() -> None:
    wall = FakeWall(WALL0 - timedelta(seconds=0.1))
    clock = PacedClock(MINUTE, 0.5, market_anchor=T0, wall_anchor=WALL0, now=wall)
    assert clock.latest_bar() == T0 - MINUTE


def test_paced_clock_returns_the_newest_bar_when_the_caller_is_behind() -> None:
    wall = FakeWall(WALL0 + timedelta(seconds=3))
    clock = PacedClock(MINUTE, 1.0, market_anchor=T0, wall_anchor=WALL0, now=wall)
    assert clock.wait_for_bar_after(T0, threading.Event()) == T0 + 3 * MINUTE


def test_paced_clock_blocks_until_the_next_bar_closes() -> None:
    start = datetime.now(UTC)
    clock = PacedClock(MINUTE, 0.02, market_anchor=T0, wall_anchor=start)
    got = clock.wait_for_bar_after(T0, threading.Event())
    # the first bar after T0, or a newer one where the wake-up came late on a loaded host
    # (the newest bar is what a caller behind gets): no timing slack is relied on
    assert T0 + MINUTE <= got <= clock.latest_bar()
    assert datetime.now(UTC) - start >= timedelta(seconds=0.02)  # it blocked until then


def test_paced_clock_wait_is_interrupted_by_stop_from_another_thread() -> None:
    clock = PacedClock(MINUTE, 3600.0, market_anchor=T0, wall_anchor=datetime.now(UTC))
    stop, result = threading.Event(), []
    waiter = threading.Thread(target=lambda: result.append(clock.wait_for_bar_after(T0, stop)))
    waiter.start()
    stop.set()
    waiter.join(timeout=5)
    assert not waiter.is_alive()
    assert result == [None]


def test_wall_clock_is_wall_time_rounded_down_to_the_interval() -> None:
    wall = FakeWall(datetime(2024, 3, 1, 14, 30, 59, 999999, tzinfo=UTC))
    clock = wall_clock(MINUTE, now=wall)
    assert clock.latest_bar() == datetime(2024, 3, 1, 14, 30, tzinfo=UTC)
    wall.t = datetime(2024, 3, 1, 14, 31, tzinfo=UTC)
    assert clock.latest_bar() == datetime(2024, 3, 1, 14, 31, tzinfo=UTC)
    assert wall_clock(timedelta(hours=1), now=wall).latest_bar() == T0.replace(minute=0)


def test_paced_clock_accepts_an_unaligned_time_to_wait_after() -> None:
    wall = FakeWall(WALL0 + timedelta(seconds=2))
    clock = PacedClock(MINUTE, 1.0, market_anchor=T0, wall_anchor=WALL0, now=wall)
    assert clock.wait_for_bar_after(T0 + 90 * timedelta(seconds=1), threading.Event()) == (
        T0 + 2 * MINUTE
    )


def test_paced_clock_says_how_long_until_the_bar_after_a_time_closes() -> None:
    wall = FakeWall(WALL0 + timedelta(seconds=0.25))
    clock = PacedClock(MINUTE, 2.0, T0, WALL0, now=wall)
    assert clock.seconds_until_bar_after(T0) == pytest.approx(1.75)  # bar 1 closes at 2 s
    assert clock.seconds_until_bar_after(T0 + MINUTE) == pytest.approx(3.75)
    wall.t = WALL0 + timedelta(seconds=5)  # bar 1 closed 3 s ago: its work is due now
    assert clock.seconds_until_bar_after(T0) == 0.0


def test_fast_clock_never_waits_so_has_no_time_until_a_bar() -> None:
    assert FastClock(MINUTE).seconds_until_bar_after(T0) is None
