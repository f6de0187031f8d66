"""The simulated broker's account as of its last read, kept current by its own writes.

Checking an order (buying power, the sellable quantity) read cash, every position and the
open orders from the account file once per order; an update sends one order per
instrument, so that was several statements per order and a scan of the open orders each.
SimBroker reads this view once per bar (at its settle) and updates it after each of its
own committed writes; a write by another connection (SQLite's data_version) makes it read
the file again, so the view never decides on stale figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from service.types import OrderOutcome, OrderStatus, Position, Side, Symbol


class OpenOrder(NamedTuple):
    """An accepted order not yet filled, as the account file stores it."""

    seq: int
    client_order_id: str
    symbol: Symbol
    side: str
    qty: float
    submitted_at: str  # UTC isoformat: market time of its submission
    reason: str | None = None

    def open_outcome(self) -> OrderOutcome:
        """This order's record while it is open, as the file holds it."""
        return OrderOutcome(self.client_order_id, OrderStatus.ACCEPTED, sim_order_id(self.seq),
                            0.0, None, self.reason, self.symbol, _SIDES[self.side])


class Fill(NamedTuple):
    """An open order filled in full at the open of the bar of `time`."""

    order: OpenOrder
    time: datetime  # the bar's close time
    price: float  # its open
    delta: float  # the order's quantity, signed (negative: a sale)
    after: Position | None  # the position it leaves (None: flat)

    def outcome(self) -> OrderOutcome:
        """The order's record once filled, as the file then holds it."""
        order = self.order
        return OrderOutcome(order.client_order_id, OrderStatus.FILLED, sim_order_id(order.seq),
                            order.qty, float(self.price), order.reason, order.symbol,
                            _SIDES[order.side])


_SIDES = {side.value: side for side in Side}  # Side(text) is a slower lookup of the same


def sim_order_id(seq: int) -> str:
    """The broker_order_id of the order of `seq`."""
    return f"sim-{seq:08d}"


@dataclass
class AccountView:
    cash: float
    positions: dict[Symbol, Position]
    open_orders: list[OpenOrder]  # oldest first
    version: int  # the file's data_version when this was read
    # per side and symbol, the open quantity summed oldest first (as SQL's SUM adds them)
    _open_qty: dict[tuple[str, Symbol], float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for order in self.open_orders:
            self._add_qty(order)

    def open_outcomes(self) -> tuple[OrderOutcome, ...]:
        """The open orders' records, oldest first, as the file holds them."""
        return tuple(order.open_outcome() for order in self.open_orders)

    def open_qty(self, symbol: Symbol, side: Side) -> float:
        return self._open_qty.get((side.value, symbol), 0.0)

    def open_buys(self) -> list[tuple[Symbol, float]]:
        """Per symbol (in symbol order), the quantity of open buys."""
        buy = Side.BUY.value
        return sorted((symbol, qty) for (side, symbol), qty in self._open_qty.items()
                      if side == buy)  # fmt: skip

    def opened(self, order: OpenOrder) -> None:
        """An order this broker has just accepted (and committed)."""
        self.open_orders.append(order)
        self._add_qty(order)

    def filled(self, fills: list[Fill], cash: float) -> None:
        """These orders (oldest first, each with the position it left) filled, leaving
        `cash` (as the file holds it)."""
        for order, _, _, _, after in fills:
            if after is None:
                self.positions.pop(order.symbol, None)
            else:
                self.positions[order.symbol] = after
        done = {fill.order.seq for fill in fills}
        self.open_orders = [order for order in self.open_orders if order.seq not in done]
        self.cash, self._open_qty = cash, {}
        self.__post_init__()

    def _add_qty(self, order: OpenOrder) -> None:
        key = (order.side, order.symbol)
        self._open_qty[key] = self._open_qty.get(key, 0.0) + order.qty
