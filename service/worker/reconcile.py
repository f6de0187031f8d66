"""Reconciliation with the broker, which is the truth for positions.

Our view of a position is a baseline (kept in the state database's meta table) plus what
our own intents have filled since. When the broker says otherwise, for a symbol with no
order working, the broker's figure is adopted and the event logged (`position.adopted`).
At start-up, open orders on our symbols that are not our own pending intents are
cancelled (`order.stale_canceled`): paper trading rejects wash trades against them, and
the strategy would otherwise wait on them forever. Orders of another database (another
order epoch: one moved aside) are foreign like a hand-placed order: never matched to an
intent, cancelled when working on our symbols, their fills adopted as positions. Before
that, an open order of ours (this epoch) from an update AFTER the newest checkpoint proves
the database lost committed updates (orders are only sent once their checkpoint is
durable): the worker refuses to start.
"""

from __future__ import annotations

import json

import structlog

from service.broker.base import Broker
from service.state.store import StateStore, UnusableStateError
from service.types import BrokerSnapshot, Symbol

log = structlog.get_logger("service.worker")

BASELINE_KEY = "positions.baseline"
QTY_EPS = 1e-9


class Reconciler:
    def __init__(self, broker: Broker, store: StateStore) -> None:
        self.broker, self.store = broker, store

    def at_start(
        self, symbols: tuple[Symbol, ...], account: str = "", seq: int = 0
    ) -> BrokerSnapshot:
        """`account` and `seq` (the newest checkpoint) arm the lost-updates check."""
        snapshot = self.broker.snapshot()
        self.refuse_lost_updates(snapshot, account, seq)
        self.cancel_stale(snapshot, symbols)
        self.adopt_positions(snapshot)
        return snapshot

    def refuse_lost_updates(self, snapshot: BrokerSnapshot, account: str, seq: int) -> None:
        """Trading on a database that lost committed updates (a deleted -wal file, an old
        backup) would decide again what was already decided: refuse, never reset."""
        ids = self.store.ids_for(account)  # another epoch's orders are foreign, not lost
        later = [o.client_order_id for o in snapshot.open_orders
                 if o.client_order_id and ids.update_of(o.client_order_id) > seq]
        if later:
            raise UnusableStateError(
                f"{self.store.path}: the broker holds order {later[0]} of an update after "
                f"the newest checkpoint ({seq}): this database lost committed updates (a "
                "missing -wal file or an old backup); restore the complete database (with "
                "its -wal file) or reconcile by hand before starting again"
            )

    def cancel_stale(self, snapshot: BrokerSnapshot, symbols: tuple[Symbol, ...]) -> None:
        ours = {r.intent.client_order_id for r in self.store.open_intents()}
        for order in snapshot.open_orders:
            if order.client_order_id in ours or order.symbol not in symbols:
                continue
            if order.broker_order_id is None:
                continue  # nothing to address the cancel to
            self.broker.cancel(order.broker_order_id)
            log.warning("order.stale_canceled", symbol=order.symbol,
                        client_order_id=order.client_order_id,
                        side=order.side.value if order.side else None,
                        reason="open at start-up and not one of our pending intents")

    def adopt_positions(self, snapshot: BrokerSnapshot) -> None:
        filled = self.store.filled_by_symbol()
        baseline = self._baseline()
        busy = {o.symbol for o in snapshot.open_orders} | {
            r.intent.symbol for r in self.store.open_intents()}
        changed = False
        for symbol in sorted((set(baseline) | set(filled) | set(snapshot.positions)) - busy):
            local = baseline.get(symbol, 0.0) + filled.get(symbol, 0.0)
            held = snapshot.qty(symbol)
            if abs(held - local) > QTY_EPS:
                log.warning("position.adopted", symbol=symbol, local_qty=local, broker_qty=held)
                baseline[symbol] = held - filled.get(symbol, 0.0)
                changed = True
        if changed:
            self.store.set_meta(BASELINE_KEY, json.dumps(baseline, sort_keys=True))

    def _baseline(self) -> dict[Symbol, float]:
        stored = self.store.meta(BASELINE_KEY)
        return {} if stored is None else {k: float(v) for k, v in json.loads(stored).items()}

