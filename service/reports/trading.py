"""What the orders did: turnover, costs, trades and hit rate. Pure, no I/O.

Definitions (docs/reports.md says the same for the operator):

- trades: orders that filled, in full or in part (filled quantity > 0).
- turnover = traded notional / mean equity, traded notional = sum over fills of filled
  quantity x average fill price (buys and sells both count). 2.0 means the book was bought
  and sold once over the period.
- costs: fees and commissions paid. The simulated broker (service/broker/sim.py) charges
  none and has no spread: a market order fills at the open of the next bar. Alpaca's paper
  accounts charge no commission on US equities, and the state database records no fee
  for any fill. So the figure is 0 for every run today, and it is 0 because nothing was
  charged, not because a charge was left out. Fills at the next open rather than the
  decision's close are slippage, which the equity curve already carries.
- a round trip is one holding of one symbol from flat to flat: it opens with the fill
  that leaves a flat position and closes with the fill that brings it back to flat (a
  fill through zero closes one and opens the next, its quantity split). Its profit is the
  cash it took in less the cash it paid out. A holding still open at the last bar is
  closed there, at the symbol's last close (else at its last fill price), so that a short
  run, which rarely goes flat, still has a hit rate.
- hit rate = round trips with a profit > 0 / all round trips; None with no round trip.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby

_FLAT = 1e-9  # quantities below this are flat (as the simulated broker's book)


@dataclass(frozen=True)
class Fill:
    seq: int  # the update that sent the order: fills are taken in this order
    symbol: str
    side: str  # "buy" or "sell"
    qty: float  # filled, > 0
    price: float  # average fill price


@dataclass(frozen=True)
class TradingFigures:
    turnover: float | None  # None: no positive mean equity to divide by
    costs: float
    trades: int
    round_trips: int
    hit_rate: float | None


def signed(fill: Fill) -> float:
    return fill.qty if fill.side == "buy" else -fill.qty


def _symbol_trips(fills: Iterable[Fill], mark: float | None) -> list[float]:
    """Profits of one symbol's round trips, fills in order (module docstring)."""
    trips: list[float] = []
    qty, cash, price = 0.0, 0.0, 0.0
    for fill in fills:
        delta, price = signed(fill), fill.price
        if qty * delta < 0 and abs(delta) > abs(qty) + _FLAT:  # through zero: split it
            trips.append(cash + qty * price)  # the part that closes the holding
            delta, qty, cash = delta + qty, 0.0, 0.0
        qty, cash = qty + delta, cash - delta * price
        if abs(qty) < _FLAT:
            trips.append(cash)
            qty, cash = 0.0, 0.0
    if abs(qty) >= _FLAT:
        trips.append(cash + qty * (price if mark is None else mark))
    return trips


def round_trip_profits(fills: Sequence[Fill], last_close: Mapping[str, float]) -> list[float]:
    """Every round trip's profit, symbol by symbol; open holdings marked at `last_close`."""
    ordered = sorted(fills, key=lambda f: (f.symbol, f.seq))
    return [
        profit
        for symbol, group in groupby(ordered, key=lambda f: f.symbol)
        for profit in _symbol_trips(group, last_close.get(symbol))
    ]


def hit_rate(profits: Sequence[float]) -> float | None:
    if not profits:
        return None
    return sum(1 for p in profits if p > 0) / len(profits)


def turnover(notional: float, mean_equity: float) -> float | None:
    return notional / mean_equity if mean_equity > 0 else None


def trading_figures(
    fills: Sequence[Fill], mean_equity: float, last_close: Mapping[str, float]
) -> TradingFigures:
    """The figures of the filled orders of one account over a period of `mean_equity`."""
    real = [f for f in fills if f.qty > 0]
    profits = round_trip_profits(real, last_close)
    return TradingFigures(
        turnover=turnover(sum(f.qty * f.price for f in real), mean_equity),
        costs=0.0,  # nothing is charged today: see the module docstring
        trades=len(real),
        round_trips=len(profits),
        hit_rate=hit_rate(profits),
    )
