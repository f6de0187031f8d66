"""A price series through the worker's own update path, one bar at a time.

The window is the worker's (`InstrumentState.append`), the update its `refresh`: one cold
update at the first bar, then a warm one per bar, each starting from the carry the one
before left; or, `between_bars`, the worker's [model] sample_between_bars path
(service/worker/between_bars.py): each update's sampler after it, the next bar's estimate
by reweighting its draws. Used by `bench regime-change` and by the validation's
worker-path check.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

import numpy as np

from gpu_backend.numpy_backend import NumpyBackend
from regime_model.estimate import RegimeEstimate
from regime_model.spec import ModelSpec
from regime_model.types import FloatArray
from regime_model.update import InstrumentCarry, refresh
from service.model_state import InstrumentState
from service.types import Bar
from service.worker.between_bars import BetweenBars
from service.worker.update_inputs import UpdateInputs

KEY = np.array([1])  # one instrument: its random streams' key


class Step(NamedTuple):
    time: str  # the bar's date (the first column of the file)
    p_turbulent: float  # P(most volatile regime at this bar | the window), posterior mean
    converged: bool
    acceptance: float
    rhat_decision: float
    mcse: float  # the gate's two Monte Carlo errors: P(turbulent), the log predictive sd
    vol_mcse: float
    at_bar: bool  # sampled at the bar (between bars: the weights could not serve it)


def bars(dates: list[str], closes: np.ndarray, start: int, stop: int) -> list[Bar]:
    """Bars [start, stop) of a daily series, each closing at 21:00 UTC of its date."""

    def bar(i: int) -> Bar:
        at = datetime.fromisoformat(dates[i][:10]).replace(hour=21, tzinfo=UTC)
        c = float(closes[i])
        return Bar(at, c, c, c, c, 0.0)

    return [bar(i) for i in range(start, stop)]


def replay(
    dates: list[str], closes: np.ndarray, first: int, last: int, spec: ModelSpec, seed: int,
    between_bars: bool = False,
) -> list[Step]:
    """A cold update on the window ending at bar `first`, then a warm one at every bar to
    `last` (inclusive); the steps of the warm ones."""
    if first - spec.window < 0:
        have = f"bar {first} ({dates[first]}) has {first} bars before it"
        raise ValueError(f"{have}; the window needs {spec.window}: start the range later")
    state = InstrumentState("SERIES")
    state.append(bars(dates, closes, first - spec.window, first + 1), spec.window)
    update = _BetweenBars(spec, seed) if between_bars else _AtTheBar(spec, seed)
    update(state.returns, 1)
    steps = []
    for i in range(first + 1, last + 1):
        state.append(bars(dates, closes, i, i + 1), spec.window)
        estimate = update(state.returns, i - first + 1)
        steps.append(Step(
            dates[i], float(estimate.regime_probs[0, -1]), bool(estimate.converged[0]),
            float(estimate.acceptance[0]), float(estimate.rhat_decision[0]),
            float(estimate.p_turbulent_mcse[0]), float(estimate.vol_mcse[0]), update.at_bar,
        ))  # fmt: skip
    return steps


class _AtTheBar:
    """The update with the sampler at the bar: `refresh`, its carry for the next."""

    def __init__(self, spec: ModelSpec, seed: int) -> None:
        self.spec, self.seed, self.backend = spec, seed, NumpyBackend()
        self.carry: InstrumentCarry | None = None
        self.at_bar = True

    def __call__(self, returns: FloatArray, seq: int) -> RegimeEstimate:
        estimate, carries, _ = refresh(returns[None], [self.carry], KEY, seq, self.seed,
                                       self.spec, self.backend)  # fmt: skip
        self.carry = carries[0]
        return estimate


class _BetweenBars(_AtTheBar):
    """[model] sample_between_bars, as the worker runs it: the bar's estimate (reweighed,
    or sampled at the bar), its deferred diagnostics, then the sampler after the commit,
    whose carry the next update starts from."""

    def __init__(self, spec: ModelSpec, seed: int) -> None:
        super().__init__(spec, seed)
        self.worker = BetweenBars(spec, self.backend)

    def __call__(self, returns: FloatArray, seq: int) -> RegimeEstimate:
        inputs = UpdateInputs(["SERIES"], returns[None], [self.carry], KEY, seq, self.seed)
        _, figures, diagnosis = self.worker.estimate(inputs)
        self.at_bar = figures["sampled_at_bar"] > 0
        with diagnosis:
            estimate = diagnosis.wait()
        [(_, self.carry)] = self.worker.sample_after(["SERIES"])
        return estimate
