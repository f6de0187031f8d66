"""From regime posteriors to target positions and order intents. Pure functions.

Volatility targeting with a regime filter: an instrument is held while the posterior
probability of its most turbulent regime stays low, at a weight that scales its predicted
volatility to the target; it goes flat when turbulence becomes likely. Two thresholds
(enter below, exit above) give hysteresis so a probability hovering near one threshold
does not churn orders.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from service.settings import StrategySettings
from service.types import BrokerSnapshot, OrderIntent, Side, Symbol


@dataclass(frozen=True)
class Signal:
    """What the model says about one instrument at this bar."""

    symbol: Symbol
    p_turbulent: float
    pred_vol: float  # sd of the next bar's log return
    price: float
    converged: bool


@dataclass(frozen=True)
class Decision:
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
    target shrinks by `unconverged_exposure` (an open position is reduced, none is opened)."""
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
        if order_id_symbol(decision.symbol) in busy or not delta:
            continue
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
