"""Translation between Alpaca's JSON and our types: mapping tables and x_to_y functions.

Pure: no I/O, no alpaca-py (a value Alpaca adds later is logged, once per value, and
read as "unknown"). Each table is read both ways (tests/alpaca/test_mapping.py round-trips
every row). Alpaca sends numbers as strings ("2", "101.5") and bar times as the bar's
START; our `Bar.time` is its close, so the interval is added on the way in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import structlog

from service.broker.base import PlacedOrder
from service.types import Bar, BrokerSnapshot, OrderOutcome, OrderStatus, Position, Side, utc

Json = dict[str, Any]
log = structlog.get_logger("service.broker")

# Alpaca order status -> ours. The FIRST row naming each of our statuses is the one used
# the other way. Alpaca's "pending_*", "held", "calculated"... are all still working.
ORDER_STATUS: tuple[tuple[str, OrderStatus], ...] = (
    ("new", OrderStatus.ACCEPTED),
    ("filled", OrderStatus.FILLED),
    ("partially_filled", OrderStatus.PARTIALLY_FILLED),
    ("rejected", OrderStatus.REJECTED),
    ("canceled", OrderStatus.CANCELED),
    ("expired", OrderStatus.EXPIRED),
    ("accepted", OrderStatus.ACCEPTED),
    ("pending_new", OrderStatus.ACCEPTED),
    ("accepted_for_bidding", OrderStatus.ACCEPTED),
    ("held", OrderStatus.ACCEPTED),
    ("calculated", OrderStatus.ACCEPTED),
    ("pending_cancel", OrderStatus.ACCEPTED),
    ("pending_replace", OrderStatus.ACCEPTED),
    ("stopped", OrderStatus.ACCEPTED),
    ("suspended", OrderStatus.ACCEPTED),
    ("done_for_day", OrderStatus.EXPIRED),
    ("replaced", OrderStatus.CANCELED),
)
SIDE: tuple[tuple[str, Side], ...] = (("buy", Side.BUY), ("sell", Side.SELL))
# Our bar interval -> Alpaca's timeframe (amount, unit); amounts Alpaca accepts per unit.
TIMEFRAME_UNITS: tuple[tuple[str, timedelta, int], ...] = (
    ("Day", timedelta(days=1), 1),
    ("Hour", timedelta(hours=1), 23),
    ("Min", timedelta(minutes=1), 59),
)

_STATUS_IN = dict(ORDER_STATUS)
_STATUS_OUT = {ours: theirs for theirs, ours in reversed(ORDER_STATUS)}
_SIDE_IN, _SIDE_OUT = dict(SIDE), {ours: theirs for theirs, ours in SIDE}


_WARNED: set[tuple[str, str]] = set()  # (field, value) already logged by this process
_MAX_WARNED = 1000  # bounded: a broker sending endless new values must not grow memory


class MappingError(ValueError):
    """Alpaca sent something we cannot read; says which field and value."""


def _unknown_value(field: str, value: str, table: str) -> None:
    """A value Alpaca added after this table was written: warn once per value, go on."""
    if (field, value) in _WARNED or len(_WARNED) >= _MAX_WARNED:
        return
    _WARNED.add((field, value))
    log.warning("alpaca.unknown_value", field=field, value=value, read_as="unknown",
                next=f"add it to {table} in service/alpaca/mapping.py")


def status_from_alpaca(status: str) -> OrderStatus:
    """Ours; a status we do not know is UNKNOWN: the order exists, its fate is looked up
    again at every update, and it is never resent."""
    found = _STATUS_IN.get(status)
    if found is None:
        _unknown_value("status", status, "ORDER_STATUS")
        return OrderStatus.UNKNOWN
    return found


def status_to_alpaca(status: OrderStatus) -> str:
    return _STATUS_OUT[status]


def side_from_alpaca(side: str) -> Side | None:
    """Ours, or None (as for an order without a side) for a side we do not know."""
    found = _SIDE_IN.get(side)
    if found is None:
        _unknown_value("side", side, "SIDE")
    return found


def side_to_alpaca(side: Side) -> str:
    return _SIDE_OUT[side]


def number(value: Any, name: str) -> float:
    """Alpaca's numeric strings ("2", "-3.5") and nulls (0.0) as floats."""
    if value is None or value == "":
        return 0.0
    try:
        return float(value)
    except (TypeError, ValueError):
        raise MappingError(f"{name}: not a number: {value!r}") from None


# RFC 3339 date-time: 'T' or 't' (or a space, RFC 3339 section 5.6 note), 1-9 fraction
# digits, and 'Z', 'z' or any +hh:mm / -hh:mm offset (Alpaca's clock answers in New York
# time: -05:00 or -04:00).
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(?:([Zz])|([+-])(\d{2}):(\d{2}))")


def time_from_alpaca(text: str) -> datetime:
    """RFC 3339 with any offset and up to nanoseconds -> aware UTC datetime (the digits
    past microseconds are dropped)."""
    match = _RFC3339.fullmatch(text.strip())
    if match is None:
        raise MappingError(f"time {text!r} is not RFC 3339 (e.g. 2026-12-01T09:30:00-05:00)")
    year, month, day, hour, minute, second, frac, _zulu, sign, hours, minutes = match.groups()
    micro = int((frac or "0").ljust(6, "0")[:6])
    try:
        offset = timedelta(hours=int(hours or 0), minutes=int(minutes or 0))
        zone = timezone(-offset if sign == "-" else offset)
        stamp = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second),
                         micro, tzinfo=zone)
    except ValueError as error:  # out of range: month 13, offset +25:00...
        raise MappingError(f"time {text!r} is not RFC 3339: {error}") from None
    return stamp.astimezone(UTC)


def time_to_alpaca(ts: datetime) -> str:
    return utc(ts).isoformat().replace("+00:00", "Z")


# -- orders -------------------------------------------------------------------------------


def order_to_outcome(order: Json) -> OrderOutcome:
    filled = number(order.get("filled_qty"), "filled_qty")
    price = order.get("filled_avg_price")
    status = status_from_alpaca(str(order["status"]))
    return OrderOutcome(
        client_order_id=str(order["client_order_id"]),
        status=status,
        broker_order_id=str(order["id"]),
        filled_qty=filled,
        filled_avg_price=None if price is None else number(price, "filled_avg_price"),
        reason=f"alpaca status {order['status']}" if status == OrderStatus.REJECTED else None,
        symbol=order.get("symbol"),
        side=side_from_alpaca(str(order["side"])) if order.get("side") else None,
    )


def outcome_to_order(outcome: OrderOutcome, qty: float) -> Json:
    """The order JSON Alpaca would send for `outcome` (the mapping read the other way)."""
    return {
        "id": outcome.broker_order_id,
        "client_order_id": outcome.client_order_id,
        "status": status_to_alpaca(outcome.status),
        "symbol": outcome.symbol,
        "side": side_to_alpaca(outcome.side) if outcome.side else None,
        "qty": f"{qty:g}",
        "filled_qty": f"{outcome.filled_qty:g}",
        "filled_avg_price": None if outcome.filled_avg_price is None
        else f"{outcome.filled_avg_price:g}",
    }


def placed_from_alpaca(order: Json) -> PlacedOrder:
    """Who placed an order and when: `submitted_at` (`created_at` where Alpaca sends none)."""
    when = order.get("submitted_at") or order.get("created_at")
    if not when:
        raise MappingError(f"order {order.get('id')!r} has neither submitted_at nor created_at")
    return PlacedOrder(str(order["client_order_id"]), time_from_alpaca(str(when)),
                       order.get("symbol"))


def placed_to_alpaca(placed: PlacedOrder) -> Json:
    """The fields of Alpaca's order JSON that `placed_from_alpaca` reads."""
    when = time_to_alpaca(placed.submitted_at)
    return {"client_order_id": placed.client_order_id, "submitted_at": when,
            "created_at": when, "symbol": placed.symbol}


# -- positions and the account -------------------------------------------------------------


def position_from_alpaca(position: Json) -> Position:
    return Position(
        symbol=str(position["symbol"]),
        qty=number(position["qty"], "qty"),
        avg_entry_price=number(position.get("avg_entry_price"), "avg_entry_price"),
    )


def position_to_alpaca(position: Position) -> Json:
    return {
        "symbol": position.symbol,
        "qty": f"{position.qty:g}",
        "side": "long" if position.qty > 0 else "short",
        "avg_entry_price": f"{position.avg_entry_price:g}",
    }


def snapshot_from_alpaca(
    account: Json, positions: Iterable[Json], open_orders: Iterable[Json]
) -> BrokerSnapshot:
    held = [position_from_alpaca(p) for p in positions]
    return BrokerSnapshot(
        cash=number(account.get("cash"), "cash"),
        equity=number(account.get("equity"), "equity"),
        positions={p.symbol: p for p in held if p.qty},
        open_orders=tuple(order_to_outcome(o) for o in open_orders),
    )


# -- bars -----------------------------------------------------------------------------------


def interval_to_timeframe(interval: timedelta) -> tuple[int, str]:
    """1m -> (1, "Min"), 4h -> (4, "Hour"), 1d -> (1, "Day"); refuses what Alpaca cannot serve."""
    for unit, size, most in TIMEFRAME_UNITS:
        amount, rest = divmod(interval, size)
        if not rest and 1 <= amount <= most:
            return int(amount), unit
    raise MappingError(f"interval {interval} has no Alpaca timeframe: use 1-59 minutes, "
                       "1-23 hours or 1 day")


def timeframe_to_interval(amount: int, unit: str) -> timedelta:
    sizes = {name: size for name, size, _ in TIMEFRAME_UNITS}
    return amount * sizes[unit]


def bar_from_alpaca(bar: Json, interval: timedelta) -> Bar:
    return Bar(
        time=time_from_alpaca(str(bar["t"])) + interval,
        open=number(bar["o"], "o"),
        high=number(bar["h"], "h"),
        low=number(bar["l"], "l"),
        close=number(bar["c"], "c"),
        volume=number(bar["v"], "v"),
    )


def bar_to_alpaca(bar: Bar, interval: timedelta) -> Json:
    return {"t": time_to_alpaca(bar.time - interval), "o": bar.open, "h": bar.high,
            "l": bar.low, "c": bar.close, "v": bar.volume, "n": None, "vw": None}
