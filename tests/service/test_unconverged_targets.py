"""An unconverged estimate is never traded on silently: `model.unconverged` names the
instrument, its diagnostics and what the rule did to its target."""

from __future__ import annotations

import numpy as np
from structlog.testing import capture_logs

from regime_model.estimate import RegimeEstimate
from service.model_state import InstrumentState, ModelState
from service.settings import StrategySettings
from service.strategy import Decision
from service.types import BrokerSnapshot
from service.worker.targets import decide_targets


def _estimate(converged: list[bool]) -> RegimeEstimate:
    n = len(converged)
    return RegimeEstimate(
        regime_probs=np.tile([0.9, 0.1], (n, 1)), pred_mean=np.zeros(n),
        pred_vol=np.full(n, 0.001), converged=np.array(converged), rhat=np.full(n, 1.3),
        rhat_decision=np.array([1.01 if c else 1.42 for c in converged]),
        ess_bulk=np.full(n, 35.0), divergences=np.zeros(n, np.int64), step_size=np.ones(n),
        ess_tail=np.ones(n), ebfmi=np.ones(n), trajectory_length=np.ones(n),
        acceptance=np.full(n, 0.8), p_turbulent_sd=np.full(n, 0.05),
        p_turbulent_mcse=np.array([0.01 if c else 0.061 for c in converged]),
        vol_mcse=np.full(n, 0.01), shift_acceptance=np.zeros(n),
    )  # fmt: skip


def test_the_unconverged_instrument_is_logged_and_its_target_halved() -> None:
    book = ModelState({s: InstrumentState(s, last_close=100.0) for s in ("SPY", "QQQ")})
    book.instruments["QQQ"].decision = Decision("QQQ", True, 0.4, 40.0)
    snapshot = BrokerSnapshot(cash=20_000.0, equity=20_000.0)
    with capture_logs() as logs:
        rows, _ = decide_targets(book, ("SPY", "QQQ"), ["SPY", "QQQ"], _estimate([True, False]),
                                 snapshot, 7, StrategySettings(), "t")  # fmt: skip
    (event,) = [e for e in logs if e["event"] == "model.unconverged"]
    assert event["log_level"] == "warning"
    assert event["rule"] == "previous target x 0.5"
    assert event["instruments"] == [{
        "symbol": "QQQ", "p_turbulent_mcse": 0.061, "vol_mcse": 0.01, "rhat_decision": 1.42,
        "ess_bulk": 35.0, "divergences": 0,
        "p_turbulent": 0.1, "previous_qty": 40.0, "target_qty": 20.0,
    }]  # fmt: skip
    assert [r.target_qty for r in rows if r.symbol == "QQQ"] == [20.0]
