"""The service's shared value types: bars, orders, broker snapshots.

Every timestamp is a timezone-aware UTC datetime; a naive one is a bug and is refused
where these types are built (see `utc`).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

AccountName = str
Symbol = str

# Alpaca keeps client_order_id unique per account forever; sources disagree between 48
# and 128 characters, so we stay inside the stricter bound.
CLIENT_ORDER_ID_MAX = 48
CLIENT_ORDER_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,48}$")


def utc(ts: datetime) -> datetime:
    """Return `ts` in UTC, refusing naive datetimes (they are bugs in trading code)."""
    if ts.tzinfo is None or ts.utcoffset() is None:
        raise ValueError(f"naive datetime {ts.isoformat()}: timestamps must carry a timezone")
    return ts.astimezone(UTC)


@dataclass(frozen=True, slots=True)
class Bar:
    """One OHLCV bar; `time` is the bar's close time (the moment it became known)."""

    time: datetime
    open: float
    high: float
    low: float
    close: float
    volume: float


class Side(enum.StrEnum):
    BUY = "buy"
    SELL = "sell"


class OrderStatus(enum.StrEnum):
    """Where an order intent stands, as far as we know."""

    PENDING = "pending"  # durable, not yet sent
    UNKNOWN = "unknown"  # sent, outcome not known (timeout, 5xx, dropped connection)
    ACCEPTED = "accepted"  # the broker has it, not yet filled
    FILLED = "filled"
    PARTIALLY_FILLED = "partially_filled"
    REJECTED = "rejected"  # explicit refusal: final, never resubmitted
    CANCELED = "canceled"
    EXPIRED = "expired"

    @property
    def is_final(self) -> bool:
        return self in _FINAL

    @property
    def needs_resolution(self) -> bool:
        """True while we cannot tell whether the broker holds this order."""
        return self in (OrderStatus.PENDING, OrderStatus.UNKNOWN)


_FINAL = frozenset(
    {OrderStatus.FILLED, OrderStatus.REJECTED, OrderStatus.CANCELED, OrderStatus.EXPIRED}
)


@dataclass(frozen=True, slots=True)
class OrderIntent:
    """A market order we mean to place; its client_order_id makes submission idempotent."""

    client_order_id: str
    symbol: Symbol
    side: Side
    qty: float

    def __post_init__(self) -> None:
        if not CLIENT_ORDER_ID_RE.match(self.client_order_id):
            raise ValueError(
                f"client_order_id {self.client_order_id!r} must be 1-48 characters of "
                "[A-Za-z0-9_-]"
            )
        if not self.qty > 0:
            raise ValueError(f"order qty must be positive, got {self.qty} for {self.symbol}")


@dataclass(frozen=True, slots=True)
class OrderOutcome:
    """What the broker said about an intent (or that we could not tell)."""

    client_order_id: str
    status: OrderStatus
    broker_order_id: str | None = None
    filled_qty: float = 0.0
    filled_avg_price: float | None = None
    reason: str | None = None
    symbol: Symbol | None = None  # where the broker says (open orders: to spot conflicts)
    side: Side | None = None


@dataclass(frozen=True, slots=True)
class Position:
    symbol: Symbol
    qty: float  # negative when short
    avg_entry_price: float


@dataclass(frozen=True, slots=True)
class BrokerSnapshot:
    """The broker's view of an account: the truth for cash and positions."""

    cash: float
    equity: float
    positions: dict[Symbol, Position] = field(default_factory=dict)
    open_orders: tuple[OrderOutcome, ...] = ()

    def qty(self, symbol: Symbol) -> float:
        position = self.positions.get(symbol)
        return position.qty if position else 0.0
