"""The strategy stage of an update: a decision per modelled instrument, flat targets for
those leaving the rotation until the broker shows them flat, and the order intents (and
decision rows for the checkpoint) that follow from them."""

from __future__ import annotations

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
    decisions, rows = _model_decisions(book, ready, estimate, budget, strategy)
    retired = book.drop_flat(snapshot)
    if retired:
        log.info("instruments.retired", symbols=retired, reason="flat after removal")
    decisions += [Decision(s, False, 0.0, 0.0) for s in book.retiring()]
    prices = {d.symbol: float(book.instruments[d.symbol].last_close or 0.0) for d in decisions}
    intents = order_intents(decisions, snapshot, prices, budget, id_tag, seq, strategy)
    return rows, intents


def _model_decisions(
    book: ModelState,
    ready: list[Symbol],
    estimate: RegimeEstimate | None,
    budget: float,
    strategy: StrategySettings,
) -> tuple[list[Decision], list[DecisionRow]]:
    if estimate is None:
        return [], []
    decisions, rows = [], []
    for i, symbol in enumerate(ready):
        state = book.instruments[symbol]
        signal = _signal(symbol, estimate, i, state)
        decision = decide(signal, state.decision, budget, strategy)
        _note_regime(state, estimate, i)
        state.decision = decision
        decisions.append(decision)
        rows.append(_decision_row(signal, decision, estimate, i))
    return decisions, rows


def _note_regime(state: InstrumentState, estimate: RegimeEstimate, i: int) -> None:
    regime = int(np.argmax(estimate.regime_probs[i]))
    if state.regime is not None and regime != state.regime:
        log.info(
            "regime.changed",
            symbol=state.symbol,
            **{"from": state.regime},
            to=regime,
            probability=round(float(estimate.regime_probs[i, regime]), 4),
        )
    state.regime = regime


def _signal(symbol: Symbol, estimate: RegimeEstimate, i: int, state: InstrumentState) -> Signal:
    return Signal(
        symbol=symbol,
        p_turbulent=float(estimate.regime_probs[i, -1]),
        pred_vol=float(estimate.pred_vol[i]),
        price=float(state.last_close or 0.0),
        converged=bool(estimate.converged[i]),
    )


def _decision_row(
    signal: Signal, decision: Decision, estimate: RegimeEstimate, i: int
) -> DecisionRow:
    return DecisionRow(
        symbol=signal.symbol,
        regime=int(np.argmax(estimate.regime_probs[i])),
        p_turbulent=signal.p_turbulent,
        pred_mean=float(estimate.pred_mean[i]),
        pred_vol=signal.pred_vol,
        converged=signal.converged,
        target_weight=decision.target_weight,
        target_qty=decision.target_qty,
    )
