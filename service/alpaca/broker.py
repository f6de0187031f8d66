"""The Broker protocol over an Alpaca paper account (through `AlpacaClient`).

Exactly once: the trader has made the intent durable before `submit` is called, and its
client_order_id never changes. An answer that does not say what happened (a timeout, a
5xx, a dropped connection, 429, or 422 "client_order_id must be unique" on our OWN
submit: alpaca-py's or a proxy's retry of an order that was in fact accepted) is UNKNOWN,
resolved at once by `get_order_by_client_id`: found -> adopt it; 404 -> send the same id
again (at most `submit_attempts` sends); unreachable -> stay UNKNOWN for the trader to
resolve at its next update. Only an explicit 4xx refusal is a rejection.

`recent_orders` pages GET /v2/orders (status=all, after, newest first) backwards with
`until`, which is exclusive: each next page ends one microsecond after the oldest order
seen, so orders sharing that time come again (kept once, by id) rather than being lost.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import structlog

from service.alpaca.client import AlpacaClient, AlpacaHttpError, AlpacaTransportError
from service.alpaca.mapping import (
    order_to_outcome,
    placed_from_alpaca,
    side_to_alpaca,
    snapshot_from_alpaca,
    time_from_alpaca,
)
from service.broker.base import BrokerError, PlacedOrder
from service.types import BrokerSnapshot, OrderIntent, OrderOutcome, OrderStatus

log = structlog.get_logger("service.broker")

DUPLICATE_ID_CODE = 40010001
_UNREACHABLE = object()
ORDERS_PAGE = 500  # Alpaca's largest page of GET /v2/orders
ORDERS_PAGES = 10  # recent_orders lists about the newest 5,000 at most (4,991)
_MICROSECOND = timedelta(microseconds=1)


def is_duplicate_id(error: AlpacaHttpError) -> bool:
    return error.status == 422 and error.code == DUPLICATE_ID_CODE and (
        "client_order_id" in error.message or not error.message
    )


def is_ambiguous(error: AlpacaHttpError) -> bool:
    """An answer that does not tell whether the order exists."""
    return error.status == 429 or error.status >= 500 or error.status == 0 or is_duplicate_id(error)


def _wall_now() -> datetime:
    return datetime.now(UTC)


class AlpacaBroker:
    def __init__(
        self,
        client: AlpacaClient,
        submit_attempts: int = 3,
        trade_when_closed: bool = False,
        now: Callable[[], datetime] = _wall_now,
    ) -> None:
        self._client = client
        self._attempts = submit_attempts
        self._trade_when_closed = trade_when_closed
        self._now = now
        self._clock: tuple[bool, datetime] | None = None  # (open, until when that holds)

    # -- the Broker protocol -------------------------------------------------------------

    def snapshot(self) -> BrokerSnapshot:
        return snapshot_from_alpaca(
            self._client.account(), self._client.positions(), self._client.open_orders()
        )

    def submit(self, intent: OrderIntent) -> OrderOutcome:
        outcome = self._post(intent)
        for attempt in range(2, self._attempts + 1):
            if outcome.status != OrderStatus.UNKNOWN:
                return outcome
            found = self._resolve(intent.client_order_id)
            if found is _UNREACHABLE:
                return outcome
            if isinstance(found, OrderOutcome):
                log.info("order.adopted", client_order_id=intent.client_order_id,
                         status=found.status.value, after=outcome.reason)
                return found
            log.info("order.resending", client_order_id=intent.client_order_id,
                     attempt=attempt, reason="the broker has no order with this id")
            outcome = self._post(intent)
        return outcome

    def lookup(self, client_order_id: str) -> OrderOutcome | None:
        order = self._client.order_by_client_id(client_order_id)
        return None if order is None else order_to_outcome(order)

    def recent_orders(self, since: datetime) -> tuple[PlacedOrder, ...]:
        found: dict[str, PlacedOrder] = {}  # by Alpaca's order id
        until: datetime | None = None
        for _ in range(ORDERS_PAGES):
            page = self._client.orders_submitted(since, until, ORDERS_PAGE)
            fresh = {str(o["id"]): placed_from_alpaca(o) for o in page
                     if str(o["id"]) not in found}
            found.update(fresh)
            if len(page) < ORDERS_PAGE or not fresh:
                break
            until = min(o.submitted_at for o in fresh.values()) + _MICROSECOND
        return tuple(sorted(found.values(), key=lambda o: o.submitted_at, reverse=True))

    def cancel(self, broker_order_id: str) -> None:
        try:
            self._client.cancel_order(broker_order_id)
        except AlpacaHttpError as error:
            if error.status not in (404, 422):
                raise
            # 404: no such order; 422: already final (filled or canceled): nothing to undo
            log.info("order.cancel_skipped", broker_order_id=broker_order_id, reason=str(error))

    def market_open(self) -> bool:
        """From the clock endpoint, asked again only when its next open/close has passed."""
        if self._trade_when_closed:
            return True
        now = self._now()
        if self._clock is None or now >= self._clock[1]:
            clock = self._client.clock()
            is_open = bool(clock["is_open"])
            until = time_from_alpaca(str(clock["next_close" if is_open else "next_open"]))
            self._clock = (is_open, until)
        return self._clock[0]

    def close(self) -> None:
        """Nothing to release: the session's connections close with the process."""

    # -- submission ------------------------------------------------------------------------

    def _post(self, intent: OrderIntent) -> OrderOutcome:
        cid = intent.client_order_id
        try:
            order = self._client.submit_market_order(
                intent.symbol, intent.qty, side_to_alpaca(intent.side), cid)
        except AlpacaHttpError as error:
            if is_ambiguous(error):
                return self._unknown(intent, f"HTTP {error.status} code={error.code}: "
                                             f"{error.message}")
            log.warning("order.rejected", client_order_id=cid, status=error.status,
                        code=error.code, reason=error.message)
            return OrderOutcome(cid, OrderStatus.REJECTED, reason=str(error),
                                symbol=intent.symbol, side=intent.side)
        except AlpacaTransportError as error:
            return self._unknown(intent, str(error))
        return order_to_outcome(order)

    def _unknown(self, intent: OrderIntent, reason: str) -> OrderOutcome:
        log.warning("order.unknown", client_order_id=intent.client_order_id, reason=reason,
                    next="look it up by client_order_id")
        return OrderOutcome(intent.client_order_id, OrderStatus.UNKNOWN, reason=reason,
                            symbol=intent.symbol, side=intent.side)

    def _resolve(self, cid: str) -> object:
        """The broker's order, None (it has none), or _UNREACHABLE."""
        try:
            return self.lookup(cid)
        except BrokerError as error:
            log.warning("order.lookup_failed", client_order_id=cid, reason=str(error),
                        next="stays unknown; resolved at the next update")
            return _UNREACHABLE
