"""Restart intensity over a sliding period (OTP's intensity/period) and backoff."""

from __future__ import annotations

from collections import deque


class RestartBudget:
    """At most `intensity` restarts within any `period_s`; one more exceeds it."""

    def __init__(self, intensity: int, period_s: float) -> None:
        self.intensity = intensity
        self.period_s = period_s
        self._times: deque[float] = deque()

    def record(self, now: float) -> bool:
        """Count a restart at `now`; True when that exceeds the budget."""
        self._times.append(now)
        while self._times and self._times[0] <= now - self.period_s:
            self._times.popleft()
        return len(self._times) > self.intensity

    @property
    def recent(self) -> int:
        return len(self._times)

    def reset(self) -> None:
        self._times.clear()


def backoff_s(recent_restarts: int, initial_s: float, max_s: float) -> float:
    """initial, 2x, 4x ... for the 1st, 2nd, 3rd restart in the period, capped."""
    if recent_restarts <= 0:
        return 0.0
    return float(min(max_s, initial_s * 2.0 ** (recent_restarts - 1)))
