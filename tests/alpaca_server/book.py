"""The local server's account: orders, fills and positions, priced by a synthetic market.

Market time is the close of the newest bar any client has asked for (the daemon fetches
bars before it trades). An order fills in full at the OPEN of the first bar after the one
in hand when it was submitted, once market time reaches that bar, like the simulated
broker. Refusals follow Alpaca: 403 for buying power, qty or a wash trade.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from service.market.synthetic import SyntheticMarket
from service.settings import SyntheticMarketSettings

Json = dict[str, Any]
START = datetime(2026, 1, 5, 14, 30, tzinfo=UTC)


NEW_YORK = ZoneInfo("America/New_York")


def stamp(ts: datetime) -> str:
    """Bar times, as Alpaca sends them: UTC, 'Z', no fraction."""
    return ts.isoformat().replace("+00:00", "Z")


def nano_stamp(ts: datetime, zone: ZoneInfo | None = None) -> str:
    """Order and clock times, as Alpaca sends them: nine fraction digits, 'Z' or (the
    clock) New York's offset, -05:00 in winter and -04:00 in summer."""
    local = ts.astimezone(zone or UTC)
    text = f"{local:%Y-%m-%dT%H:%M:%S}.{local.microsecond:06d}417{local:%z}"
    return text[:-2] + ":" + text[-2:] if zone else text[:-5] + "Z"


def ny_stamp(ts: datetime) -> str:
    """The clock's next_open / next_close: New York time, no fraction."""
    return ts.astimezone(NEW_YORK).replace(microsecond=0).isoformat()


class Refused(Exception):  # noqa: N818 - an HTTP refusal, named as Alpaca's docs name it
    def __init__(self, status: int, code: int, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def wall_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Order:
    id: str
    client_order_id: str
    symbol: str
    side: str
    qty: float
    submitted_at: datetime  # market time: the bar in hand, which decides the fill
    status: str = "new"
    filled_qty: float = 0.0
    filled_avg_price: float | None = None
    # when Alpaca took it, by the wall clock: the JSON's created_at and submitted_at
    placed_at: datetime = field(default_factory=wall_now)

    def json(self, zone: ZoneInfo | None = None) -> Json:
        """`zone`: order times in that zone's offset (default: UTC, 'Z')."""
        when = nano_stamp(self.placed_at, zone)
        return {
            "id": self.id, "client_order_id": self.client_order_id, "created_at": when,
            "updated_at": when, "submitted_at": when, "filled_at": None, "expired_at": None,
            "canceled_at": None, "failed_at": None, "replaced_at": None, "replaced_by": None,
            "replaces": None, "asset_id": str(uuid.uuid5(uuid.NAMESPACE_DNS, self.symbol)),
            "symbol": self.symbol, "asset_class": "us_equity", "notional": None,
            "qty": f"{self.qty:g}", "filled_qty": f"{self.filled_qty:g}",
            "filled_avg_price": None if self.filled_avg_price is None
            else f"{self.filled_avg_price:.4f}",
            "order_class": "simple", "order_type": "market", "type": "market",
            "side": self.side, "time_in_force": "day", "limit_price": None, "stop_price": None,
            "status": self.status, "extended_hours": False, "legs": None,
            "trail_percent": None, "trail_price": None, "hwm": None,
        }


@dataclass
class Account:
    cash: float = 100_000.0
    market: SyntheticMarket = field(
        default_factory=lambda: SyntheticMarket(SyntheticMarketSettings(seed=11, start=START)))
    market_time: datetime = START
    orders: dict[str, Order] = field(default_factory=dict)  # by client_order_id
    positions: dict[str, list[float]] = field(default_factory=dict)  # symbol: [qty, avg]
    accepted: dict[str, int] = field(default_factory=dict)  # client_order_id: creations

    @property
    def interval(self) -> timedelta:
        return self.market.bar_interval

    def advance(self, to: datetime) -> None:
        self.market_time = max(self.market_time, to)
        self.settle()

    def submit(self, body: Json) -> Order:
        cid = str(body.get("client_order_id") or uuid.uuid4())
        if cid in self.orders:
            raise Refused(422, 40010001, "client_order_id must be unique")
        symbol, side, qty = str(body["symbol"]), str(body["side"]), float(body["qty"])
        self._check(symbol, side, qty)
        order = Order(str(uuid.uuid4()), cid, symbol, side, qty, self.market_time)
        self.orders[cid] = order
        self.accepted[cid] = self.accepted.get(cid, 0) + 1
        return order

    def settle(self) -> None:
        for order in self.orders.values():
            if order.status == "new":
                self._try_fill(order)

    def cancel(self, order_id: str) -> None:
        order = next((o for o in self.orders.values() if o.id == order_id), None)
        if order is None:
            raise Refused(404, 40410000, "order not found")
        if order.status != "new":
            raise Refused(422, 42210000, f"order is already {order.status}")
        order.status = "canceled"

    def last_close(self, symbol: str) -> float:
        (bar,) = self.market.history([symbol], self.market_time, 1)[symbol]
        return bar.close

    def _check(self, symbol: str, side: str, qty: float) -> None:
        working = [o for o in self.orders.values() if o.symbol == symbol and o.status == "new"]
        if any(o.side != side for o in working):
            raise Refused(403, 40310000, "potential wash trade detected. use complex orders")
        if side == "buy":
            open_buys = sum(o.qty * self.last_close(o.symbol) for o in self.orders.values()
                            if o.status == "new" and o.side == "buy")
            if qty * self.last_close(symbol) > self.cash - open_buys:
                raise Refused(403, 40310000, "insufficient buying power")
            return
        held = self.positions.get(symbol, [0.0, 0.0])[0] - sum(
            o.qty for o in working if o.side == "sell")
        if qty > held + 1e-9:
            raise Refused(403, 40310000, f"insufficient qty available for order "
                                         f"(requested: {qty:g}, available: {held:g})")

    def _try_fill(self, order: Order) -> None:
        bars = self.market.bars_after({order.symbol: order.submitted_at}, self.market_time)
        if not bars[order.symbol]:
            return
        price = bars[order.symbol][0].open
        signed = order.qty if order.side == "buy" else -order.qty
        qty, avg = self.positions.get(order.symbol, [0.0, price])
        new_qty = qty + signed
        if abs(new_qty) < 1e-9:
            self.positions.pop(order.symbol, None)
        else:
            adding = qty * signed >= 0
            new_avg = (abs(qty) * avg + abs(signed) * price) / abs(new_qty) if adding else avg
            self.positions[order.symbol] = [new_qty, new_avg]
        self.cash -= signed * price
        order.status, order.filled_qty, order.filled_avg_price = "filled", order.qty, price

    def positions_json(self) -> list[Json]:
        out = []
        for symbol, (qty, avg) in sorted(self.positions.items()):
            price = self.last_close(symbol)
            out.append({
                "asset_id": str(uuid.uuid5(uuid.NAMESPACE_DNS, symbol)), "symbol": symbol,
                "exchange": "ARCA", "asset_class": "us_equity", "asset_marginable": True,
                "avg_entry_price": f"{avg:.4f}", "qty": f"{qty:g}", "qty_available": f"{qty:g}",
                "side": "long" if qty > 0 else "short", "market_value": f"{qty * price:.2f}",
                "cost_basis": f"{qty * avg:.2f}", "unrealized_pl": f"{qty * (price - avg):.2f}",
                "unrealized_plpc": "0", "unrealized_intraday_pl": "0",
                "unrealized_intraday_plpc": "0", "current_price": f"{price:.4f}",
                "lastday_price": f"{price:.4f}", "change_today": "0",
            })
        return out

    def account_json(self) -> Json:
        equity = self.cash + sum(q * self.last_close(s) for s, (q, _) in self.positions.items())
        return {
            "id": "2d6a3f0e-6a2c-4b7e-9a41-3f2b1c9d8e70", "account_number": "PA3TESTLOCAL",
            "status": "ACTIVE", "currency": "USD", "cash": f"{self.cash:.2f}",
            "equity": f"{equity:.2f}", "buying_power": f"{2 * self.cash:.2f}",
            "portfolio_value": f"{equity:.2f}", "trading_blocked": False,
            "transfers_blocked": False, "account_blocked": False, "shorting_enabled": False,
            "multiplier": "2", "created_at": "2024-01-02T15:00:00Z",
        }
