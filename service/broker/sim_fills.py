"""When and at what the simulated broker's orders fill: in full, at the OPEN of the first
bar whose time is after the order's submission, once that bar's time is <= now(). A fill
is never refused, so a buy that gaps up can leave cash slightly negative."""

from __future__ import annotations

from datetime import datetime

from service.broker.sim_book import AccountView, Fill, OpenOrder
from service.broker.sim_checks import QTY_EPS
from service.market.bar_batch import OPEN, BarBatch
from service.market.base import MarketFeed
from service.types import Position, Side, Symbol


def _signed(side: str, qty: float) -> float:
    return qty if side == Side.BUY else -qty


def next_position(
    symbol: Symbol, held: Position | None, delta: float, price: float
) -> Position | None:
    """The position after trading `delta` (signed) at `price`; None when flat.
    Adding to a position averages the entry price; reducing keeps it; flipping resets it."""
    qty, avg = (held.qty, held.avg_entry_price) if held else (0.0, price)
    new_qty = qty + delta
    if abs(new_qty) < QTY_EPS:
        return None
    if qty * delta >= 0:
        return Position(symbol, new_qty, (abs(qty) * avg + abs(delta) * price) / abs(new_qty))
    return Position(symbol, new_qty, avg if qty * new_qty > 0 else price)


def due_fills(view: AccountView, now: datetime, market: MarketFeed) -> list[Fill]:
    """Each open order that fills by `now`, oldest first, with the position it leaves (a
    position carried from fill to fill)."""
    held = dict(view.positions)
    fill_bars = _fill_bars(view.open_orders, now, market)
    fills = []
    for order in view.open_orders:
        bar = fill_bars.get((order.symbol, order.submitted_at))
        if bar is not None:
            (time, price), symbol = bar, order.symbol
            delta = _signed(order.side, order.qty)
            after = next_position(symbol, held.get(symbol), delta, price)
            fills.append(Fill(order, time, price, delta, after))
            if after is None:
                held.pop(symbol, None)
            else:
                held[symbol] = after
    return fills


def _fill_bars(
    unfilled: list[OpenOrder], now: datetime, market: MarketFeed
) -> dict[tuple[Symbol, str], tuple[datetime, float]]:
    """The bar each open order fills at (its time and open), by (symbol, submitted_at):
    one market read per submission time (an update's orders share theirs), as columns."""
    by_time: dict[str, set[Symbol]] = {}
    for order in unfilled:
        by_time.setdefault(order.submitted_at, set()).add(order.symbol)
    found = {}
    for submitted_at, symbols in by_time.items():
        after = datetime.fromisoformat(submitted_at)
        batch = market.batch_after(dict.fromkeys(sorted(symbols), after), now)
        found.update({(symbol, submitted_at): bar for symbol, bar in _first_bars(batch)})
    return found


def _first_bars(batch: BarBatch) -> list[tuple[Symbol, tuple[datetime, float]]]:
    """Each symbol's first bar in the batch, its time and open (a symbol without one is
    left out)."""
    ends = batch.bounds
    having = [k for k in range(len(batch.symbols)) if ends[k + 1] > ends[k]]
    rows = [ends[k] for k in having]
    opens = batch.values[rows, OPEN].tolist()
    return [(batch.symbols[k], (batch.times[row], price))
            for k, row, price in zip(having, rows, opens, strict=True)]
