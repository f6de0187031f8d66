"""Order submission: POST each intent once by its client_order_id, and settle every intent
whose fate is not known, before the trader trades again.

The same client_order_id on a resend means a POST can never duplicate an order; once a
stop is asked for, no new POST is made (the rest are durable in the checkpoint). A broker
that takes an update's orders as one all-or-nothing step (BatchBroker: the simulated
broker) gets them in one call: the stop is asked before it, and the fault points
`before_post` and `after_post` are passed once, around it, where one order by one passes
them around each order.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from service.broker.base import BatchBroker, Broker
from service.state.store import IntentRecord, StateStore
from service.types import OrderIntent, OrderOutcome, OrderStatus
from service.worker.fault_points import FaultPoints

log = structlog.get_logger("service.worker")


class OrderSubmitter:
    def __init__(
        self,
        broker: Broker,
        store: StateStore,
        faults: FaultPoints,
        stop_requested: Callable[[], bool],
    ) -> None:
        self.broker = broker
        self.store = store
        self.faults = faults
        self.stop_requested = stop_requested  # the worker's stop flag, asked before each POST
        # a broker that takes an update's orders in one call (asked once: a protocol's
        # isinstance inspects every method)
        self.batch = broker if isinstance(broker, BatchBroker) else None
        # structlog's module logger binds a new logger at every event; one bound per call
        # logs the same events without that per-order cost
        self.events: structlog.typing.FilteringBoundLogger = log

    def resolve_open_intents(self, send_unseen: bool = True) -> None:
        """Ask the broker about every intent not known to be final; send the ones it has
        never seen (same client_order_id, so a resend can never duplicate), or, while the
        account is paused or flattening (`send_unseen` False), withdraw them: an order
        decided before the pause is not placed after it."""
        settled: list[tuple[OrderIntent, OrderOutcome]] = []
        self.events = log.bind()
        try:
            records = self.store.open_intents()
            if records and self.stop_requested():
                return  # asked before any call reaches the broker, as below
            answers = self._batch_lookup(records)
            for record in records:
                if self.stop_requested():
                    return  # stop means no new POST; the next start resolves the rest
                cid = record.intent.client_order_id
                outcome = answers[cid] if answers is not None else self.broker.lookup(cid)
                if outcome is None and record.status.needs_resolution:
                    outcome = (self._post(record.intent, "after_resend") if send_unseen
                               else withdrawn(record.intent))
                elif outcome is None or outcome.status == record.status:
                    continue
                settled.append((record.intent, outcome))
        finally:
            self._record(settled)

    def send_all(self, intents: list[OrderIntent], seq: int) -> None:
        """POST the update's intents; once a stop is asked for, POST no more. The rest
        are durable in the checkpoint and sent, once, by `resolve_open_intents` at the next
        start (or the next update)."""
        sent: list[tuple[OrderIntent, OrderOutcome]] = []
        self.events = log.bind()
        try:
            if self.batch is not None and intents:
                self._send_batch(self.batch, intents, sent)
                return
            for n, intent in enumerate(intents):
                self.faults.hit("before_post")
                if self.stop_requested():
                    self._defer(len(intents) - n)
                    return
                sent.append((intent, self._post(intent, "after_post")))
        finally:
            self._record(sent)

    def _send_batch(self, broker: BatchBroker, intents: list[OrderIntent],
                    sent: list[tuple[OrderIntent, OrderOutcome]]) -> None:
        """send_all's steps, each once for the whole batch: it is one POST."""
        self.faults.hit("before_post")
        if self.stop_requested():
            self._defer(len(intents))
            return
        for intent in intents:
            self.events.info("order.submitted", **_intent_fields(intent), status="pending")
        outcomes = broker.submit_many(intents)
        self.faults.hit("after_post")  # test-only: a crash between the POST and its record
        sent.extend(zip(intents, outcomes, strict=True))

    def _defer(self, count: int) -> None:
        self.events.info("orders.deferred", count=count, reason="stop requested",
                         next="sent at the next start, by client_order_id")

    def _batch_lookup(self, records: list[IntentRecord]) -> dict[str, OrderOutcome | None] | None:
        """What a BatchBroker holds of every record, asked at once (a read: no stop to
        wait for); None for a broker asked one order at a time, between stop checks."""
        if not records or self.batch is None:
            return None
        ids = [record.intent.client_order_id for record in records]
        return dict(zip(ids, self.batch.lookup_many(ids), strict=True))

    def _post(self, intent: OrderIntent, fault_point: str) -> OrderOutcome:
        self.events.info("order.submitted", **_intent_fields(intent), status="pending")
        outcome = self.broker.submit(intent)
        self.faults.hit(fault_point)  # test-only: a crash between the POST and its record
        return outcome

    def _record(self, settled: list[tuple[OrderIntent, OrderOutcome]]) -> None:
        """The outcomes in one transaction (one fsync for an update's orders, not one
        each). An outcome lost to a crash before this is no loss: the intent stays open
        and the next resolution asks the broker for it by its client_order_id."""
        if not settled:
            return
        self.store.record_outcomes([outcome for _, outcome in settled])
        for intent, outcome in settled:
            self.events.info("order.resolved", **_intent_fields(intent),
                             status=outcome.status.value, filled_qty=outcome.filled_qty,
                             reason=outcome.reason)


def _intent_fields(intent: OrderIntent) -> dict[str, object]:
    """What every order event says of its intent."""
    return {"symbol": intent.symbol, "client_order_id": intent.client_order_id,
            "side": intent.side.value, "qty": intent.qty}


def withdrawn(intent: OrderIntent) -> OrderOutcome:
    """An intent the broker never saw, settled as canceled without being sent."""
    return OrderOutcome(intent.client_order_id, OrderStatus.CANCELED,
                        reason="withdrawn unsent: trading is paused")
