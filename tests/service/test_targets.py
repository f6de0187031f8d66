"""The strategy stage decides every instrument at once (decide_all) exactly as deciding
each one with the scalar rule would, whatever precision the model's posteriors come in."""

from __future__ import annotations

import numpy as np
from test_unconverged_targets import _estimate

from service.model_state import InstrumentState, ModelState
from service.settings import StrategySettings
from service.state.records import DecisionRow
from service.strategy import Signal, decide
from service.types import BrokerSnapshot
from service.worker.targets import decide_targets

SETTINGS = StrategySettings()


def test_float32_posteriors_meet_the_thresholds_as_the_scalar_rule_reads_them() -> None:
    """float32(0.35) is just below 0.35 as a float64 (the scalar rule enters) but equal
    to it in float32 arithmetic (a float32 comparison would not): the stage widens first."""
    symbols = ("SPY", "QQQ", "IWM")
    p = np.array([SETTINGS.enter_below, SETTINGS.exit_above, 0.2], dtype=np.float32)
    estimate = _estimate([True, True, True])._replace(
        regime_probs=np.stack([1 - p, p], axis=1))
    book = ModelState({s: InstrumentState(s, last_close=50.0) for s in symbols})
    snapshot = BrokerSnapshot(cash=30_000.0, equity=30_000.0)
    decided, _, _, _ = decide_targets(book, symbols, list(symbols), estimate, snapshot, 3, SETTINGS,
                                   "t")
    rows = map(DecisionRow, *decided)  # the columns' entries, instrument by instrument
    for symbol, p_turbulent, row in zip(symbols, p.tolist(), rows, strict=True):
        want = decide(Signal(symbol, p_turbulent, 0.001, 50.0, True), None, 10_000.0, SETTINGS)
        assert book.instruments[symbol].decision == want
        assert (row.target_weight, row.target_qty) == (want.target_weight, want.target_qty)
    assert book.instruments["SPY"].decision.invested  # type: ignore[union-attr]
