"""The per-account request budget: a burst, then a steady rate; a 429 blocks until reset."""

from __future__ import annotations

from service.alpaca.request_budget import BURST, MAX_BLOCK_S, RequestBudget


class FakeTime:
    """Monotonic and wall time that advance only when the budget pauses."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.pauses: list[float] = []

    def pause(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.t += seconds


def budget(per_minute: int = 180) -> tuple[RequestBudget, FakeTime]:
    time = FakeTime()
    return RequestBudget(per_minute, lambda: time.t, lambda: time.t, time.pause), time


def test_a_burst_goes_at_once_then_requests_are_paced_under_the_minute_limit() -> None:
    b, time = budget(180)
    for _ in range(BURST):
        b.acquire()
    assert time.pauses == []
    for _ in range(170):
        b.acquire()
    assert 59.0 < time.t - 1000.0 <= 60.0  # 180 requests took a minute, not less


def test_a_429_blocks_every_request_until_the_reset_header() -> None:
    b, time = budget()
    b.note(429, {"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": str(time.t + 7)})
    b.acquire()
    assert time.pauses == [7.0]


def test_no_requests_remaining_blocks_too_and_a_wild_reset_is_capped() -> None:
    b, time = budget()
    b.note(200, {"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": str(time.t + 9999)})
    b.acquire()
    assert time.pauses == [MAX_BLOCK_S]


def test_ordinary_answers_and_malformed_headers_do_not_block() -> None:
    b, time = budget()
    b.note(200, {"X-Ratelimit-Remaining": "150", "X-Ratelimit-Reset": "soon"})
    b.note(500, {"X-Ratelimit-Remaining": "abc"})
    b.acquire()
    assert time.pauses == []
