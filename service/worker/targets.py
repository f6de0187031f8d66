"""The strategy stage of an update: a decision per modelled instrument, flat targets for
those leaving the rotation until the broker shows them flat, and the order intents (and
decision rows for the checkpoint) that follow from them.

What the stage finds for the log, the instruments whose regime changed and those whose
estimate failed the gate, is logged after the update's commit and orders (RegimeChanges,
log_unconverged): a worker pays 30-50 us for each event it logs (docs/benchmarks.md,
thirty-eighth session), and in the daemon at 268 instruments an account on an H100 host
about 1 ms of the strategy's 2.4 went to `regime.changed` lines, ahead of the orders
(thirty-ninth session)."""

from __future__ import annotations

import time
from itertools import repeat
from operator import attrgetter
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import structlog

from regime_model.update import Diagnosis, RegimeEstimate
from service.model_state import InstrumentState, ModelState
from service.settings import StrategySettings
from service.state.records import DecisionColumns
from service.strategy import Decision, Signals, decide_all, order_intents, previous_targets
from service.types import BrokerSnapshot, OrderIntent, Symbol

log = structlog.get_logger("service.worker")
_DECISION = attrgetter("decision")


def decide_targets(
    book: ModelState,
    symbols: tuple[Symbol, ...],
    ready: list[Symbol],
    estimate: RegimeEstimate | None,
    snapshot: BrokerSnapshot,
    seq: int,
    strategy: StrategySettings,
    id_tag: str,
) -> tuple[DecisionColumns, list[OrderIntent], Unconverged | None, RegimeChanges]:
    """Targets for the modelled instruments, and flat targets for those leaving the
    rotation until the broker shows them flat; the instruments whose estimate failed the
    gate, for `log_unconverged` once their diagnostics are in; and those whose regime
    changed, to log once the orders are sent."""
    budget = snapshot.equity / max(1, len(symbols))
    held = {symbol: p.qty for symbol, p in snapshot.positions.items()}  # snapshot.qty's
    decisions, columns, failed, changes = _model_decisions(book, ready, estimate, budget,
                                                           strategy, held)
    retired = book.drop_flat(snapshot)
    if retired:
        log.info("instruments.retired", symbols=retired, reason="flat after removal")
    decisions += [Decision(s, False, 0.0, 0.0) for s in book.retiring()]
    # order_intents passes over a decision already held (most, most updates): only the
    # others go in, and only theirs are priced
    moving = [d for d in decisions if d.target_qty != held.get(d.symbol, 0.0)]
    prices = {d.symbol: float(book.instruments[d.symbol].last_close or 0.0) for d in moving}
    intents = order_intents(moving, snapshot, prices, budget, id_tag, seq, strategy)
    return columns, intents, failed, changes


class Unconverged(NamedTuple):
    """An update's instruments whose estimate failed the gate, and what the rule did to
    their targets: `model.unconverged`, logged after the commit (log_unconverged), when
    the diagnostics that line names are in."""

    rows: list[int]  # in the estimate
    p_turbulent: list[float]
    previous: list[Decision | None]
    decisions: list[Decision]
    rule: str


class RegimeChanges(NamedTuple):
    """The instruments of an update whose most probable regime differs from their last
    one: `regime.changed`, a line each, logged by `log` after the update's orders."""

    symbols: list[Symbol]
    before: list[int]
    after: list[int]
    probability: list[float]  # of the regime now most probable

    def log(self) -> None:
        if not self.symbols:
            return
        events = log.bind()  # once: the module's logger binds again at every event
        for symbol, before, after, p in zip(*self, strict=True):
            events.info("regime.changed", symbol=symbol, **{"from": before}, to=after,
                        probability=round(p, 4))


NO_CHANGES = RegimeChanges([], [], [], [])


class _Columns(NamedTuple):
    """The estimate per instrument: the strategy's inputs as float64 columns (the
    probabilities widened first, so thresholds compare as decide's Python floats do), the
    rest as Python scalars, each column converted once for the batch."""

    regime: list[int]
    p_regime: list[float]  # the posterior probability of that regime
    p_turbulent: npt.NDArray[np.float64]
    pred_mean: list[float]
    pred_vol: npt.NDArray[np.float64]
    converged: npt.NDArray[np.bool_]
    p_turbulent_sd: list[float]


def _columns(estimate: RegimeEstimate) -> _Columns:
    probs = np.asarray(estimate.regime_probs)
    regime = np.argmax(probs, axis=1)
    return _Columns(
        regime.tolist(),
        probs[np.arange(probs.shape[0]), regime].tolist(),
        np.asarray(probs[:, -1], dtype=np.float64),
        np.asarray(estimate.pred_mean, dtype=np.float64).tolist(),
        np.asarray(estimate.pred_vol, dtype=np.float64),
        np.asarray(estimate.converged, dtype=bool),
        np.asarray(estimate.p_turbulent_sd, dtype=np.float64).tolist(),
    )


def _model_decisions(
    book: ModelState,
    ready: list[Symbol],
    estimate: RegimeEstimate | None,
    budget: float,
    strategy: StrategySettings,
    held: dict[Symbol, float],
) -> tuple[list[Decision], DecisionColumns, Unconverged | None, RegimeChanges]:
    """decide() for every ready instrument, as columns (decide_all); the rows, logs and
    state they leave are those of deciding them one by one."""
    if estimate is None:
        return [], DecisionColumns.of([]), None, NO_CHANGES
    cols = _columns(estimate)
    states = list(map(book.instruments.__getitem__, ready))
    prices = [float(state.last_close or 0.0) for state in states]
    previous = list(map(_DECISION, states))
    signals = Signals(cols.p_turbulent, cols.pred_vol, np.array(prices, dtype=np.float64),
                      cols.converged)
    targets = decide_all(signals, previous_targets(previous), budget, strategy)
    weights, qtys = targets.weight.tolist(), targets.qty.tolist()
    decisions = list(map(Decision, ready, targets.invested.tolist(), weights, qtys))
    changes = _regime_changes(states, cols.regime, cols.p_regime)
    for state, decision, regime in zip(states, decisions, cols.regime, strict=True):
        state.decision, state.regime = decision, regime
    failed = np.flatnonzero(~cols.converged).tolist()
    unconverged = Unconverged(
        failed, [float(cols.p_turbulent[i]) for i in failed], [previous[i] for i in failed],
        [decisions[i] for i in failed], f"previous target x {strategy.unconverged_exposure}",
    ) if failed else None  # fmt: skip
    # the checkpoint's decision columns straight from the strategy's (no row per instrument)
    columns = DecisionColumns(list(ready), cols.regime, cols.p_turbulent.tolist(),
                              cols.pred_mean, cols.pred_vol.tolist(), cols.converged.tolist(),
                              weights, qtys, cols.p_turbulent_sd, prices,
                              list(map(held.get, ready, repeat(0.0))))
    return decisions, columns, unconverged, changes


def log_unconverged(failed: Unconverged | None, diagnosis: Diagnosis) -> float:
    """Never silently: what failed, by how much, and what the rule did to the target. Called
    after the commit and the orders: it waits for the update's diagnostics (the line names
    them) and returns how long, in ms."""
    t0 = time.perf_counter()
    estimate = diagnosis.wait()
    waited = 1e3 * (time.perf_counter() - t0)
    if failed is not None:
        rows = [_unconverged_row(estimate, *row) for row in zip(
            failed.rows, failed.p_turbulent, failed.previous, failed.decisions, strict=True)]
        log.warning("model.unconverged", instruments=rows, rule=failed.rule)
    return waited


def _unconverged_row(
    estimate: RegimeEstimate, i: int, p_turbulent: float, previous: Decision | None,
    decision: Decision,
) -> dict[str, object]:
    return {
        "symbol": decision.symbol,
        "p_turbulent_mcse": round(float(estimate.p_turbulent_mcse[i]), 4),
        "vol_mcse": round(float(estimate.vol_mcse[i]), 4),
        "rhat_decision": round(float(estimate.rhat_decision[i]), 4),
        "ess_bulk": round(float(estimate.ess_bulk[i]), 1),
        "divergences": int(estimate.divergences[i]),
        "p_turbulent": round(p_turbulent, 4),
        "previous_qty": previous.target_qty if previous else 0.0,
        "target_qty": decision.target_qty,
    }


def _regime_changes(states: list[InstrumentState], regimes: list[int],
                    probabilities: list[float]) -> RegimeChanges:
    """The instruments whose regime differs from their last one (none before: no change)."""
    changed = [(state.symbol, state.regime, regime, p)
               for state, regime, p in zip(states, regimes, probabilities, strict=True)
               if state.regime is not None and regime != state.regime]
    if not changed:
        return NO_CHANGES
    symbols, before, after, probability = map(list, zip(*changed, strict=True))
    return RegimeChanges(symbols, before, after, probability)
