"""Order submission: POST each intent once by its client_order_id, and settle every intent
whose fate is not known, before the trader trades again.

The same client_order_id on a resend means a POST can never duplicate an order; once a
stop is asked for, no new POST is made (the rest are durable in the checkpoint).
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from service.broker.base import Broker
from service.state.store import StateStore
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

    def resolve_open_intents(self, send_unseen: bool = True) -> None:
        """Ask the broker about every intent not known to be final; send the ones it has
        never seen (same client_order_id, so a resend can never duplicate), or, while the
        account is paused or flattening (`send_unseen` False), withdraw them: an order
        decided before the pause is not placed after it."""
        for record in self.store.open_intents():
            if self.stop_requested():
                return  # stop means no new POST; the next start resolves the rest
            outcome = self.broker.lookup(record.intent.client_order_id)
            if outcome is None and record.status.needs_resolution:
                outcome = self.send(record.intent) if send_unseen else self.withdraw(record.intent)
            elif outcome is not None and outcome.status != record.status:
                self._record(record.intent, outcome)

    def send_all(self, intents: list[OrderIntent], seq: int) -> None:
        """POST the update's intents; once a stop is asked for, POST no more. The rest
        are durable in the checkpoint and sent, once, by `resolve_open_intents` at the next
        start (or the next update)."""
        for n, intent in enumerate(intents):
            self.faults.hit("before_post")
            if self.stop_requested():
                log.info("orders.deferred", count=len(intents) - n, reason="stop requested",
                         next="sent at the next start, by client_order_id")
                return
            self.send(intent, seq)

    def send(self, intent: OrderIntent, seq: int | None = None) -> OrderOutcome:
        log.info(
            "order.submitted",
            symbol=intent.symbol,
            client_order_id=intent.client_order_id,
            side=intent.side.value,
            qty=intent.qty,
            status="pending",
        )
        outcome = self.broker.submit(intent)
        self.faults.hit("after_post" if seq is not None else "after_resend")
        self._record(intent, outcome)
        return outcome

    def withdraw(self, intent: OrderIntent) -> OrderOutcome:
        """Settle an intent the broker never saw as canceled, without sending it."""
        outcome = OrderOutcome(intent.client_order_id, OrderStatus.CANCELED,
                               reason="withdrawn unsent: trading is paused")
        self._record(intent, outcome)
        return outcome

    def _record(self, intent: OrderIntent, outcome: OrderOutcome) -> None:
        self.store.record_outcome(outcome)
        log.info(
            "order.resolved",
            symbol=intent.symbol,
            client_order_id=intent.client_order_id,
            side=intent.side.value,
            qty=intent.qty,
            status=outcome.status.value,
            filled_qty=outcome.filled_qty,
            reason=outcome.reason,
        )
