"""Before it waits for a bar, a worker tells its backend when that bar's update is due, so
that a GPU can raise its clocks just before (gpu_backend/clock_wake.py); a fast clock's
bars come at once, and a backend that cannot get ready is not asked."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from gpu_backend.numpy_backend import NumpyBackend
from service.clock import FastClock, PacedClock
from service.worker.process import _expect_bar

MINUTE = timedelta(minutes=1)
T0 = datetime(2024, 3, 1, 14, 30, tzinfo=UTC)
WALL0 = datetime(2030, 1, 1, tzinfo=UTC)


class Expecting:
    def __init__(self) -> None:
        self.told: list[float] = []

    def expect_work_in(self, seconds: float) -> None:
        self.told.append(seconds)


def _trader(backend: Any) -> Any:
    return SimpleNamespace(backend=backend)


def test_a_paced_worker_tells_its_backend_when_the_next_bar_is_due() -> None:
    backend = Expecting()
    clock = PacedClock(MINUTE, 3.0, T0, WALL0, now=lambda: WALL0 + timedelta(seconds=0.5))
    _expect_bar(_trader(backend), clock, T0)
    assert backend.told == [pytest.approx(2.5)]


def test_a_fast_clock_or_a_backend_that_cannot_get_ready_is_left_alone() -> None:
    backend = Expecting()
    _expect_bar(_trader(backend), FastClock(MINUTE), T0)
    assert backend.told == []
    clock = PacedClock(MINUTE, 3.0, T0, WALL0, now=lambda: WALL0)
    _expect_bar(_trader(NumpyBackend()), clock, T0)  # numpy has nothing to ready: no error
