"""An unconverged estimate is never traded on silently: `model.unconverged` names the
instrument, its diagnostics and what the rule did to its target, once the update is
committed and its orders sent."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from structlog.testing import capture_logs
from test_trader import Rig

from regime_model.deferred_diagnostics import DeferredDiagnostics
from regime_model.estimate import RegimeEstimate
from regime_model.update import Diagnosis
from service.bench.daemon_harness import LIGHT_EFFORT, two_account_settings, write_config
from service.config_loader import load_config
from service.model_state import InstrumentState, ModelState
from service.settings import StrategySettings
from service.strategy import Decision
from service.types import BrokerSnapshot
from service.worker.targets import decide_targets, log_unconverged


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


def _diagnosed(estimate: RegimeEstimate) -> Diagnosis:
    """The estimate as its diagnostics would be: these tests' estimates carry them."""
    return Diagnosis(DeferredDiagnostics(len(estimate.converged), which="none"), estimate)


def test_the_unconverged_instrument_is_logged_and_its_target_halved() -> None:
    book = ModelState({s: InstrumentState(s, last_close=100.0) for s in ("SPY", "QQQ")})
    book.instruments["QQQ"].decision = Decision("QQQ", True, 0.4, 40.0)
    snapshot = BrokerSnapshot(cash=20_000.0, equity=20_000.0)
    estimate = _estimate([True, False])
    with capture_logs() as logs:
        decided, _, failed, _ = decide_targets(book, ("SPY", "QQQ"), ["SPY", "QQQ"], estimate,
                                               snapshot, 7, StrategySettings(), "t")  # fmt: skip
        assert [e for e in logs if e["event"] == "model.unconverged"] == []  # not yet
        log_unconverged(failed, _diagnosed(estimate))
    (event,) = [e for e in logs if e["event"] == "model.unconverged"]
    assert event["log_level"] == "warning"
    assert event["rule"] == "previous target x 0.5"
    assert event["instruments"] == [{
        "symbol": "QQQ", "p_turbulent_mcse": 0.061, "vol_mcse": 0.01, "rhat_decision": 1.42,
        "ess_bulk": 35.0, "divergences": 0,
        "p_turbulent": 0.1, "previous_qty": 40.0, "target_qty": 20.0,
    }]  # fmt: skip
    assert decided.target_qty[decided.symbol.index("QQQ")] == 20.0


def test_an_update_whose_estimates_all_pass_logs_no_unconverged_line() -> None:
    book = ModelState({s: InstrumentState(s, last_close=100.0) for s in ("SPY", "QQQ")})
    estimate = _estimate([True, True])
    with capture_logs() as logs:
        _, _, failed, _ = decide_targets(book, ("SPY", "QQQ"), ["SPY", "QQQ"], estimate,
                                         BrokerSnapshot(cash=1e4, equity=1e4), 7,
                                         StrategySettings(), "t")  # fmt: skip
        log_unconverged(failed, _diagnosed(estimate))
    assert failed is None
    assert [e for e in logs if e["event"] == "model.unconverged"] == []


@pytest.mark.parametrize("between_bars", [False, True])
def test_the_unconverged_line_comes_after_the_commit_with_its_diagnostics(
    tmp_path: Path, between_bars: bool
) -> None:
    """The update commits (and sends its orders) before it waits for the diagnostics that
    `model.unconverged` names: the line is logged with checkpoint N already in the store,
    and its R-hat and ESS are numbers, not the NaN they are at the commit. Between bars,
    update 2 reweighs the sample update 1's bar run left, whose diagnostics are those that
    update 1 waited for."""
    effort = LIGHT_EFFORT.replace("mcse_max = 0.1", "mcse_max = 1e-06")  # none passes
    effort += f"sample_between_bars = {str(between_bars).lower()}\n"
    settings = two_account_settings(effort=effort)
    rig = Rig(load_config(write_config(tmp_path / "config", settings)), tmp_path / "state")
    rig.trader.resume()
    seen = rig.log_with_latest_seq()
    rig.update(0)
    rig.update(1)
    rig.close()
    lines = [(seq, e) for name, seq, e in seen if name == "model.unconverged"]
    assert [seq for seq, _ in lines] == [1, 2]  # each update's own checkpoint committed
    for _, event in lines:
        assert event["instruments"]
        assert all(math.isfinite(row["rhat_decision"]) and math.isfinite(row["ess_bulk"])
                   for row in event["instruments"])  # fmt: skip
    names = [name for name, _, _ in seen]
    assert names.index("model.unconverged") < names.index("update.completed")
