"""The broker interface: the simulated broker and the Alpaca adapter both implement it.

Submission is idempotent by client_order_id. An order whose fate we cannot tell (timeout,
5xx, dropped connection) is UNKNOWN, never rejected: `lookup` resolves it later.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from service.types import BrokerSnapshot, OrderIntent, OrderOutcome


class BrokerError(Exception):
    """The broker could not be reached or answered nonsense; the call may be retried."""


class BrokerAuthError(BrokerError):
    """The broker refused the account's keys (HTTP 401/403): retrying cannot help, a
    person must fix the keys."""


@dataclass(frozen=True, slots=True)
class PlacedOrder:
    """An order the account holds, of any status, as `recent_orders` lists it: enough to
    tell who placed it (its client_order_id) and when (aware UTC, by the broker's clock;
    the simulated broker's is market time)."""

    client_order_id: str
    submitted_at: datetime
    symbol: str | None = None


class Broker(Protocol):
    def snapshot(self) -> BrokerSnapshot:
        """Cash, equity, positions and open orders: the truth we reconcile against."""
        ...

    def submit(self, intent: OrderIntent) -> OrderOutcome:
        """Send one market order. Never raises for order-level outcomes; a transport
        failure returns status UNKNOWN. Submitting an id the broker already holds returns
        that order's outcome (no duplicate is created)."""
        ...

    def lookup(self, client_order_id: str) -> OrderOutcome | None:
        """The broker's record of this order, or None when it has none."""
        ...

    def recent_orders(self, since: datetime) -> tuple[PlacedOrder, ...]:
        """The account's orders of any status submitted after `since`, newest first (an
        implementation may bound how many: then the newest). A transport failure raises
        BrokerError, as every read does."""
        ...

    def cancel(self, broker_order_id: str) -> None:
        """Ask the broker to cancel a working order; one already final is left as it is."""
        ...

    def market_open(self) -> bool:
        """Whether orders may be sent now (a simulated market never closes)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class BatchBroker(Broker, Protocol):
    """A broker that takes many orders in one call, as one step that commits all or none
    of them (the simulated broker: one transaction). A broker whose every order is its
    own request (Alpaca: one POST each) is not one: the worker sends its orders one by
    one, asking before each whether a stop was requested, which a batch could not."""

    def submit_many(self, intents: Sequence[OrderIntent]) -> list[OrderOutcome]:
        """Each intent's outcome, in order, exactly as `submit` one after another would
        give them (each order checked against the account the ones before it left);
        idempotent by client_order_id as `submit` is."""
        ...

    def lookup_many(self, client_order_ids: Sequence[str]) -> list[OrderOutcome | None]:
        """`lookup` of each id, in order."""
        ...
