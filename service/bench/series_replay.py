"""A price series through the worker's own update path, one bar at a time.

The window is the worker's (`InstrumentState.append`), the update its `refresh`: one cold
update at the first bar, then a warm one per bar, each starting from the carry the one
before left. Used by `bench regime-change` and by the validation's worker-path check.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

import numpy as np

from gpu_backend.numpy_backend import NumpyBackend
from regime_model.spec import ModelSpec
from regime_model.update import refresh
from service.model_state import InstrumentState
from service.types import Bar

KEY = np.array([1])  # one instrument: its random streams' key


class Step(NamedTuple):
    time: str  # the bar's date (the first column of the file)
    p_turbulent: float  # P(most volatile regime at this bar | the window), posterior mean
    converged: bool
    acceptance: float
    rhat_decision: float
    mcse: float  # the gate's two Monte Carlo errors: P(turbulent), the log predictive sd
    vol_mcse: float


def bars(dates: list[str], closes: np.ndarray, start: int, stop: int) -> list[Bar]:
    """Bars [start, stop) of a daily series, each closing at 21:00 UTC of its date."""

    def bar(i: int) -> Bar:
        at = datetime.fromisoformat(dates[i][:10]).replace(hour=21, tzinfo=UTC)
        c = float(closes[i])
        return Bar(at, c, c, c, c, 0.0)

    return [bar(i) for i in range(start, stop)]


def replay(
    dates: list[str], closes: np.ndarray, first: int, last: int, spec: ModelSpec, seed: int
) -> list[Step]:
    """A cold update on the window ending at bar `first`, then a warm one at every bar to
    `last` (inclusive); the steps of the warm ones."""
    if first - spec.window < 0:
        have = f"bar {first} ({dates[first]}) has {first} bars before it"
        raise ValueError(f"{have}; the window needs {spec.window}: start the range later")
    state, backend = InstrumentState("SERIES"), NumpyBackend()
    state.append(bars(dates, closes, first - spec.window, first + 1), spec.window)
    _, carries, _ = refresh(state.returns[None], [None], KEY, 1, seed, spec, backend)
    steps = []
    for i in range(first + 1, last + 1):
        state.append(bars(dates, closes, i, i + 1), spec.window)
        seq = i - first + 1
        estimate, carries, _ = refresh(
            state.returns[None], list(carries), KEY, seq, seed, spec, backend
        )
        steps.append(Step(
            dates[i], float(estimate.regime_probs[0, -1]), bool(estimate.converged[0]),
            float(estimate.acceptance[0]), float(estimate.rhat_decision[0]),
            float(estimate.p_turbulent_mcse[0]), float(estimate.vol_mcse[0]),
        ))  # fmt: skip
    return steps
