"""The strategy stage of an update: a decision per modelled instrument, flat targets for
those leaving the rotation until the broker shows them flat, and the order intents (and
decision rows for the checkpoint) that follow from them."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import structlog

from regime_model.update import RegimeEstimate
from service.model_state import InstrumentState, ModelState
from service.settings import StrategySettings
from service.state.store import DecisionRow
from service.strategy import Decision, Signal, decide, order_intents
from service.types import BrokerSnapshot, OrderIntent, Symbol

log = structlog.get_logger("service.worker")


def decide_targets(
    book: ModelState,
    symbols: tuple[Symbol, ...],
    ready: list[Symbol],
    estimate: RegimeEstimate | None,
    snapshot: BrokerSnapshot,
    seq: int,
    strategy: StrategySettings,
    id_tag: str,
) -> tuple[list[DecisionRow], list[OrderIntent]]:
    """Targets for the modelled instruments, and flat targets for those leaving the
    rotation until the broker shows them flat."""
    budget = snapshot.equity / max(1, len(symbols))
    decisions, rows = _model_decisions(book, ready, estimate, budget, strategy, snapshot)
    retired = book.drop_flat(snapshot)
    if retired:
        log.info("instruments.retired", symbols=retired, reason="flat after removal")
    decisions += [Decision(s, False, 0.0, 0.0) for s in book.retiring()]
    prices = {d.symbol: float(book.instruments[d.symbol].last_close or 0.0) for d in decisions}
    intents = order_intents(decisions, snapshot, prices, budget, id_tag, seq, strategy)
    return rows, intents


class _Columns(NamedTuple):
    """The estimate as Python scalars per instrument, converted once for the batch (one
    numpy call per column instead of one per instrument and field)."""

    regime: list[int]
    p_regime: list[float]  # the posterior probability of that regime
    p_turbulent: list[float]
    pred_mean: list[float]
    pred_vol: list[float]
    converged: list[bool]
    p_turbulent_sd: list[float]


def _columns(estimate: RegimeEstimate) -> _Columns:
    probs = np.asarray(estimate.regime_probs)
    regime = np.argmax(probs, axis=1)
    return _Columns(
        regime.tolist(),
        probs[np.arange(probs.shape[0]), regime].tolist(),
        probs[:, -1].tolist(),
        np.asarray(estimate.pred_mean, dtype=np.float64).tolist(),
        np.asarray(estimate.pred_vol, dtype=np.float64).tolist(),
        np.asarray(estimate.converged, dtype=bool).tolist(),
        np.asarray(estimate.p_turbulent_sd, dtype=np.float64).tolist(),
    )


def _model_decisions(
    book: ModelState,
    ready: list[Symbol],
    estimate: RegimeEstimate | None,
    budget: float,
    strategy: StrategySettings,
    snapshot: BrokerSnapshot,
) -> tuple[list[Decision], list[DecisionRow]]:
    if estimate is None:
        return [], []
    cols = _columns(estimate)
    decisions, rows, unconverged = [], [], []
    for i, symbol in enumerate(ready):
        state = book.instruments[symbol]
        signal = Signal(symbol, cols.p_turbulent[i], cols.pred_vol[i],
                        float(state.last_close or 0.0), cols.converged[i])
        decision = decide(signal, state.decision, budget, strategy)
        if not signal.converged:
            unconverged.append(_unconverged_row(estimate, i, signal, state.decision, decision))
        _note_regime(state, cols.regime[i], cols.p_regime[i])
        state.decision = decision
        decisions.append(decision)
        rows.append(DecisionRow(symbol, cols.regime[i], signal.p_turbulent, cols.pred_mean[i],
                                signal.pred_vol, signal.converged, decision.target_weight,
                                decision.target_qty, cols.p_turbulent_sd[i], signal.price,
                                snapshot.qty(symbol)))
    if unconverged:
        # Never silently: what failed, by how much, and what the rule did to the target.
        log.warning("model.unconverged", instruments=unconverged,
                    rule=f"previous target x {strategy.unconverged_exposure}")
    return decisions, rows


def _unconverged_row(
    estimate: RegimeEstimate, i: int, signal: Signal, previous: Decision | None,
    decision: Decision,
) -> dict[str, object]:
    return {
        "symbol": signal.symbol,
        "p_turbulent_mcse": round(float(estimate.p_turbulent_mcse[i]), 4),
        "vol_mcse": round(float(estimate.vol_mcse[i]), 4),
        "rhat_decision": round(float(estimate.rhat_decision[i]), 4),
        "ess_bulk": round(float(estimate.ess_bulk[i]), 1),
        "divergences": int(estimate.divergences[i]),
        "p_turbulent": round(signal.p_turbulent, 4),
        "previous_qty": previous.target_qty if previous else 0.0,
        "target_qty": decision.target_qty,
    }


def _note_regime(state: InstrumentState, regime: int, probability: float) -> None:
    if state.regime is not None and regime != state.regime:
        log.info(
            "regime.changed",
            symbol=state.symbol,
            **{"from": state.regime},
            to=regime,
            probability=round(probability, 4),
        )
    state.regime = regime
