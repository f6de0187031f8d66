"""The worker's side of control: what its request lets an update do.

- running: trade to the model's targets.
- paused: the model keeps updating and checkpointing (decisions and targets are recorded,
  so a resume needs no warm-up) but the update creates no order intents; an intent of an
  earlier update that the broker never saw is withdrawn, not sent (OrderSubmitter).
- flatten: at each update, one market order per position the broker shows, to zero,
  through the normal durable path (checkpoint first, then the POST by client_order_id, so a
  crash cannot duplicate one). It stays `flatten` until an update finds the broker flat
  (no position, no open order); then the worker switches itself to paused and rewrites the
  control file so. The goal is a level ("flat"), not an edge ("send the sells once"): a
  worker that crashes anywhere in between restarts in flatten, looks at the broker again,
  and orders only what is still held; a symbol with an order working waits for it.
"""

from __future__ import annotations

from pathlib import Path

import structlog

from service.control.requests import (
    RUNNING,
    ControlFileError,
    ControlRequest,
    read_request,
    request,
    write_request,
)
from service.strategy import client_order_id
from service.types import BrokerSnapshot, OrderIntent, Side

log = structlog.get_logger("service.worker")


class TradingMode:
    def __init__(self, account: str, state_dir: Path | None = None) -> None:
        self.account = account
        self.state_dir = state_dir  # where the control file is; None: in-memory only
        self.current = RUNNING
        self._pause_noted = False  # `control.paused` once per pause

    @property
    def sends_unseen(self) -> bool:
        """Whether an earlier update's intent that the broker never saw may be sent now."""
        return self.current.trading

    def load(self) -> None:
        """At start: the request on file. One that cannot be read starts the worker paused:
        it may have been a pause, and trading against the operator's wish is the worse
        mistake."""
        if self.state_dir is None:
            return
        try:
            wanted = read_request(self.state_dir, self.account)
        except ControlFileError as error:
            log.warning("control.invalid", reason=str(error), mode="paused",
                        next="run `regime-trader pause|resume|flatten` to rewrite the file")
            wanted = request("paused", by="", source="unreadable control file")
        self.apply(wanted, at_start=True)

    def apply(self, wanted: ControlRequest, at_start: bool = False) -> None:
        """A request from the file or the supervisor; the same one again changes nothing."""
        if wanted == self.current:
            return
        self.current, self._pause_noted = wanted, False
        if at_start and wanted.trading:
            return  # trading normally, as a worker starts anyway: nothing to say
        log.info("control.applied", mode=wanted.mode, by=wanted.by,
                 requested_at=wanted.requested_at, source=wanted.source, at_start=at_start)

    def orders(
        self, intents: list[OrderIntent], snapshot: BrokerSnapshot, seq: int, id_tag: str
    ) -> list[OrderIntent]:
        """The intents this update may commit and send, given the model's `intents`."""
        if self.current.mode == "running":
            return intents
        if self.current.mode == "flatten":
            return self._flatten(snapshot, seq, id_tag)
        if not self._pause_noted:
            self._pause_noted = True
            log.info("control.paused", withheld=len(intents), by=self.current.by,
                     next="no orders until `regime-trader resume`; the model keeps updating")
        return []

    def _flatten(self, snapshot: BrokerSnapshot, seq: int, id_tag: str) -> list[OrderIntent]:
        closes = close_all(snapshot, seq, id_tag)
        if closes or snapshot.open_orders:
            log.info("control.flattening", orders=len(closes),
                     positions=len(snapshot.positions), open_orders=len(snapshot.open_orders))
            return closes
        self._flat()
        return []

    def _flat(self) -> None:
        asked = self.current
        self.apply(request("paused", by=asked.by, source="flatten"))
        self._pause_noted = True  # the flatten said what happens; no second line
        if self.state_dir is not None:
            save_if_unchanged(self.state_dir, self.account, asked, self.current)


def save_if_unchanged(
    state_dir: Path, account: str, asked: ControlRequest, now: ControlRequest
) -> None:
    """Rewrite the file to `now`, unless the operator has asked something else since
    `asked` (that request wins; the supervisor forwards it). A write that fails leaves
    `flatten` on file, which is safe: the next start finds the broker flat and pauses
    again."""
    try:
        if read_request(state_dir, account) == asked:
            write_request(state_dir, account, now)
    except (ControlFileError, OSError) as error:
        log.warning("control.unsaved", reason=str(error),
                    next="the file still says flatten; harmless: flat, then paused again")


def close_all(snapshot: BrokerSnapshot, seq: int, id_tag: str) -> list[OrderIntent]:
    """A market order to zero for every position the broker shows, except where an order
    is already working (it would double the trade; the next update sees its result)."""
    busy = {order.symbol for order in snapshot.open_orders}
    return [
        OrderIntent(client_order_id(id_tag, seq, p.symbol), p.symbol,
                    Side.SELL if p.qty > 0 else Side.BUY, abs(p.qty))
        for p in snapshot.positions.values()
        if p.qty and p.symbol not in busy
    ]
