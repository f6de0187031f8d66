"""Market time and pacing: when the newest bar has closed, and waiting for the next one.

Bar times are bar close times in market time (UTC). A worker asks its clock for the
newest closed bar and blocks, interruptibly, until a later one closes:

- `FastClock` hands out one bar per call as fast as the caller asks (backtests, tests).
- `PacedClock` maps wall time onto market time (one bar per `pace_s` wall seconds);
  `wall_clock(interval)` is the live case, where market time is wall time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

from service.types import utc

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_MIN_WAIT_S = 0.001  # floor on a wait, so rounding at a bar boundary never busy-spins


class ClockError(Exception):
    """A clock was asked something it cannot answer yet, or was built with bad settings."""


class Clock(Protocol):
    def latest_bar(self) -> datetime:
        """The newest bar close time (market time, UTC) that has closed by now."""
        ...

    def wait_for_bar_after(
        self, t: datetime, stop: threading.Event, timeout: float | None = None
    ) -> datetime | None:
        """Block until a bar later than `t` has closed; return the newest closed bar time
        (possibly several bars after `t`). None when `stop` is set first, when `timeout`
        seconds pass first (so the caller can heartbeat), or when the clock has no bar
        after `t` at all (see `is_exhausted_after`)."""
        ...

    def is_exhausted_after(self, t: datetime) -> bool:
        """True when no bar after `t` will ever come (a bounded replay past its end)."""
        ...

    def seconds_until_bar_after(self, t: datetime) -> float | None:
        """Wall seconds until the first bar after `t` closes (0 if it has), or None where
        the clock does not wait (a fast clock): what a worker tells its backend, so that
        a GPU can be made ready just before the work comes."""
        ...


def _positive_interval(interval: timedelta) -> timedelta:
    if interval <= timedelta(0):
        raise ClockError(f"bar interval must be positive, got {interval}")
    return interval


class FastClock:
    """Deterministic and never waits: `wait_for_bar_after(t)` returns exactly
    `t + interval`, or None when that is past `end` or `stop` is set.

    `latest_bar()` is the last time handed out; before the first call it raises
    ClockError, since a fast clock has no "now" until the caller says where it starts.
    """

    def __init__(self, interval: timedelta, end: datetime | None = None) -> None:
        self._interval = _positive_interval(interval)
        self._end = utc(end) if end is not None else None
        self._latest: datetime | None = None

    @property
    def interval(self) -> timedelta:
        return self._interval

    def latest_bar(self) -> datetime:
        if self._latest is None:
            raise ClockError(
                "FastClock.latest_bar() called before any wait_for_bar_after(): "
                "a fast clock starts where the caller's first request says"
            )
        return self._latest

    def wait_for_bar_after(
        self, t: datetime, stop: threading.Event, timeout: float | None = None
    ) -> datetime | None:
        if stop.is_set() or self.is_exhausted_after(t):
            return None
        self._latest = utc(t) + self._interval
        return self._latest

    def is_exhausted_after(self, t: datetime) -> bool:
        return self._end is not None and utc(t) + self._interval > self._end

    def seconds_until_bar_after(self, t: datetime) -> float | None:
        return None


def _wall_now() -> datetime:
    return datetime.now(UTC)


class PacedClock:
    """Market time advancing one bar `interval` per `pace_s` seconds of wall time.

    At wall time `wall_anchor` the newest closed bar is `market_anchor`; bar times are
    `market_anchor + n * interval`. Wall time comes from `now` (injected for tests).
    Arithmetic is in integer microseconds, so bar boundaries are exact.
    """

    def __init__(
        self,
        interval: timedelta,
        pace_s: float,
        market_anchor: datetime,
        wall_anchor: datetime,
        now: Callable[[], datetime] = _wall_now,
    ) -> None:
        self._interval = _positive_interval(interval)
        self._pace_us = round(pace_s * 1_000_000)
        if self._pace_us < 1:
            raise ClockError(f"pace_s must be at least one microsecond, got {pace_s}")
        self._market_anchor = utc(market_anchor)
        self._wall_anchor = utc(wall_anchor)
        self._now = now

    @property
    def interval(self) -> timedelta:
        return self._interval

    def latest_bar(self) -> datetime:
        return self._bar_time(self._bars_closed(utc(self._now())))

    def wait_for_bar_after(
        self, t: datetime, stop: threading.Event, timeout: float | None = None
    ) -> datetime | None:
        target = self._first_bar_after(utc(t))
        give_up = None if timeout is None else time.monotonic() + timeout
        while not stop.is_set():
            now = utc(self._now())
            n = self._bars_closed(now)
            if n >= target:
                return self._bar_time(n)
            wait = max(self._seconds_until(target, now), _MIN_WAIT_S)
            if give_up is not None:
                if time.monotonic() >= give_up:
                    return None
                wait = min(wait, max(give_up - time.monotonic(), _MIN_WAIT_S))
            stop.wait(wait)
        return None

    def is_exhausted_after(self, t: datetime) -> bool:
        return False

    def seconds_until_bar_after(self, t: datetime) -> float | None:
        return max(0.0, self._seconds_until(self._first_bar_after(utc(t)), utc(self._now())))

    def _bars_closed(self, wall: datetime) -> int:
        """Index n of the newest bar closed at `wall` (negative before the anchor)."""
        return ((wall - self._wall_anchor) // _MICROSECOND) // self._pace_us

    def _bar_time(self, n: int) -> datetime:
        return self._market_anchor + n * self._interval

    def _first_bar_after(self, t: datetime) -> int:
        return (t - self._market_anchor) // self._interval + 1

    def _seconds_until(self, n: int, wall: datetime) -> float:
        closes_at = self._wall_anchor + timedelta(microseconds=n * self._pace_us)
        return (closes_at - wall).total_seconds()


def wall_clock(interval: timedelta, now: Callable[[], datetime] = _wall_now) -> PacedClock:
    """The live clock: market time is wall time, bars close on multiples of `interval`
    since the Unix epoch (every minute on the minute for 1-minute bars)."""
    interval = _positive_interval(interval)
    return PacedClock(interval, interval.total_seconds(), EPOCH, EPOCH, now)
