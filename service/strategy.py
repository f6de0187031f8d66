"""From regime posteriors to target positions and order intents. Pure functions.

Volatility targeting with a regime filter: an instrument is held while the posterior
probability of its most turbulent regime stays low, at a weight that scales its predicted
volatility to the target; it goes flat when turbulence becomes likely. Two thresholds
(enter below, exit above) give hysteresis so a probability hovering near one threshold
does not churn orders.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from service.settings import StrategySettings
from service.types import BrokerSnapshot, OrderIntent, Side, Symbol

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Signal:
    """What the model says about one instrument at this bar."""

    symbol: Symbol
    p_turbulent: float
    pred_vol: float  # sd of the next bar's log return
    price: float
    converged: bool


class Decision(NamedTuple):
    """A target for one instrument (a NamedTuple: a warm update makes one per instrument,
    and this is the cheapest immutable record to make)."""

    symbol: Symbol
    invested: bool
    target_weight: float  # of the instrument's share of equity
    target_qty: float


def decide(
    signal: Signal,
    previous: Decision | None,
    budget: float,
    settings: StrategySettings,
) -> Decision:
    """Target for one instrument. An unconverged posterior is not traded on: the previous
    target shrinks by `unconverged_exposure` (an open position is reduced, none is opened).

    The rule as stated for one instrument: the daemon runs decide_all over every
    instrument at once, which tests/service/test_strategy.py holds to this, bit for bit."""
    if not signal.converged:
        return _reduced(previous, signal.symbol, settings.unconverged_exposure)
    invested = _hysteresis(signal.p_turbulent, previous.invested if previous else False, settings)
    weight = _vol_target_weight(signal.pred_vol, settings) if invested else 0.0
    qty = math.floor(weight * budget / signal.price) if signal.price > 0 else 0.0
    return Decision(signal.symbol, invested, weight, float(qty))


def _reduced(previous: Decision | None, symbol: Symbol, exposure: float) -> Decision:
    if previous is None or not previous.invested:
        return Decision(symbol, False, 0.0, 0.0)
    qty = float(math.floor(previous.target_qty * exposure))
    return Decision(symbol, qty > 0, previous.target_weight * exposure if qty > 0 else 0.0, qty)


def _hysteresis(p_turbulent: float, was_invested: bool, settings: StrategySettings) -> bool:
    if was_invested:
        return p_turbulent <= settings.exit_above
    return p_turbulent < settings.enter_below


def _vol_target_weight(pred_vol: float, settings: StrategySettings) -> float:
    per_bar_target = settings.target_vol / math.sqrt(settings.bars_per_year)
    if not pred_vol > 0 or not math.isfinite(pred_vol):
        return 0.0
    return min(settings.max_weight, per_bar_target / pred_vol)


class Signals(NamedTuple):
    """Signal's fields as columns, one element per instrument (float64, and bool)."""

    p_turbulent: F64
    pred_vol: F64
    price: F64
    converged: npt.NDArray[np.bool_]


class Targets(NamedTuple):
    """Decision's fields as columns, one element per instrument."""

    invested: npt.NDArray[np.bool_]
    weight: F64
    qty: F64


def previous_targets(previous: Sequence[Decision | None]) -> Targets:
    """The previous decisions as columns (none yet: flat, as decide reads it)."""
    return Targets(np.array([d is not None and d.invested for d in previous], dtype=bool),
                   np.array([d.target_weight if d else 0.0 for d in previous], dtype=np.float64),
                   np.array([d.target_qty if d else 0.0 for d in previous], dtype=np.float64))


def decide_all(
    signals: Signals, previous: Targets, budget: float, settings: StrategySettings
) -> Targets:
    """decide() for every instrument at once: the same rule and the same float64
    arithmetic, element by element (tests hold it to decide, bit for bit)."""
    was = previous.invested
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # where decide
        # never computes; where it does, _floor_where raises as math.floor would
        invested = np.where(was, signals.p_turbulent <= settings.exit_above,
                            signals.p_turbulent < settings.enter_below)
        weight = np.where(invested, _vol_target_weights(signals.pred_vol, settings), 0.0)
        bought = signals.converged & (signals.price > 0)
        qty = _floor_where(weight * budget / signals.price, bought)
        kept = ~signals.converged & was
        reduced = _floor_where(previous.qty * settings.unconverged_exposure, kept)
    still = reduced > 0
    reduced_weight = np.where(still, previous.weight * settings.unconverged_exposure, 0.0)
    converged = signals.converged
    return Targets(np.where(converged, invested, still),
                   np.where(converged, weight, reduced_weight), np.where(converged, qty, reduced))


def _vol_target_weights(pred_vol: F64, settings: StrategySettings) -> F64:
    per_bar_target = settings.target_vol / math.sqrt(settings.bars_per_year)
    usable = (pred_vol > 0) & np.isfinite(pred_vol)
    return np.where(usable, np.minimum(settings.max_weight, per_bar_target / pred_vol), 0.0)


def _floor_where(values: F64, where: npt.NDArray[np.bool_]) -> F64:
    """float(math.floor(v)) where `where` holds, 0.0 elsewhere. math.floor's errors are
    kept (nan and inf raise, as decide does), and so is its zero: floor(-0.0) is -0.0 in
    numpy but 0 in math, so 0.0 is added (-0.0 + 0.0 is 0.0; any other value is kept)."""
    bad = where & ~np.isfinite(values)
    if bad.any():
        math.floor(float(values[bad][0]))  # raises ValueError (nan) or OverflowError (inf)
    return np.where(where, np.floor(values) + 0.0, 0.0)


def order_intents(
    decisions: list[Decision],
    snapshot: BrokerSnapshot,
    prices: dict[Symbol, float],
    budget: float,
    account: str,
    seq: int,
    settings: StrategySettings,
) -> list[OrderIntent]:
    """Orders that move each position to its target, skipping trivial rebalances and
    symbols that already have an order working (a second one would double the trade)."""
    busy = {id_symbol_part(o.client_order_id) for o in snapshot.open_orders}
    intents = []
    for decision in decisions:
        delta = decision.target_qty - snapshot.qty(decision.symbol)
        if not delta or (busy and order_id_symbol(decision.symbol) in busy):
            continue  # nothing to do (most instruments, most updates), or already working
        small = abs(delta) * prices[decision.symbol] < settings.min_trade_fraction * budget
        if small and decision.target_qty != 0:
            continue  # a trivial rebalance; going flat is never trivial
        side = Side.BUY if delta > 0 else Side.SELL
        cid = client_order_id(account, seq, decision.symbol)
        intents.append(OrderIntent(cid, decision.symbol, side, abs(delta)))
    return intents


def client_order_id(account: str, seq: int, symbol: Symbol) -> str:
    """Deterministic and unique per (account, update, symbol): at most 48 characters.

    'rt-' + account (<=16) + '-' + seq (<=10 digits) + '-' + symbol (<=16 characters;
    '.' becomes '_' and '/' becomes '__', so BRK.B, BTC/USD and BTC.USD stay distinct).
    """
    return f"rt-{account}-{seq}-{order_id_symbol(symbol)}"


def order_id_symbol(symbol: Symbol) -> str:
    """How a symbol appears at the end of a client_order_id."""
    return symbol.replace("/", "__").replace(".", "_")


def id_symbol_part(cid: str) -> str:
    return cid.rsplit("-", 1)[-1]
