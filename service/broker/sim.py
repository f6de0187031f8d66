"""An in-process simulated broker that behaves like a remote one.

Its account lives in its OWN SQLite file (WAL, one transaction per mutation), so it
outlives a crashed worker the way a real broker would (sim_account says why a power loss
may cost it its last orders, and why that is safe). Market time comes
from `now()` (the bar the worker is processing); nothing else about time is stored.
That file is the broker's, not the state database: as a remote broker keeps its books
to itself, the SQL on it lives in sim_account (and sim_book_rows), outside service.state.

Orders are market orders, filled as sim_fills says (at the next bar's open), lazily at
the start of every call. Submission is checked as sim_checks says (buying power, the
sellable quantity). An update's orders go in one call and one transaction (submit_many,
service.broker.base.BatchBroker), each accepted or refused exactly as one `submit` after
another would; `submit` is a batch of one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from service.broker.base import PlacedOrder
from service.broker.sim_account import SimAccount
from service.broker.sim_book import AccountView, Fill, OpenOrder, sim_order_id
from service.broker.sim_checks import SubmissionChecks
from service.broker.sim_fills import due_fills
from service.broker.sim_prices import LatestCloses
from service.market.base import MarketFeed
from service.types import (
    BrokerSnapshot,
    OrderIntent,
    OrderOutcome,
    OrderStatus,
    utc,
)


class SimBroker:
    """The Broker protocol (and BatchBroker) over a local SQLite account and a MarketFeed
    for prices."""

    def __init__(
        self,
        db_path: Path | str,
        market: MarketFeed,
        now: Callable[[], datetime],
        starting_cash: float = 100_000.0,
        allow_short: bool = False,
    ) -> None:
        """Open (or create, funded with `starting_cash`) the account at `db_path`; an
        existing account keeps its own cash whatever `starting_cash` says."""
        self._market = market
        self._now = now
        self._account = SimAccount(db_path, starting_cash)
        self._prices = LatestCloses(market)
        self._checks = SubmissionChecks(self._prices, allow_short)
        # The time of the last settle: an order fills at the open of the first bar after
        # its submission, so at an unchanged now() nothing more can fill (an order placed
        # meanwhile was placed at now() and waits for a later bar), and the broker calls
        # of one update settle once.
        self._settled_at: datetime | None = None
        # The account as of the last settle, kept current by this broker's own writes:
        # the checks and the snapshot read it instead of the file (service.broker.sim_book).
        self._view: AccountView | None = None
        # The outcomes of the orders this broker accepted or filled at _settled_at: what a
        # lookup of them would read back from the file (the update's reconcile asks for
        # each order it sent one bar before, just filled by the settle).
        self._outcomes: dict[str, OrderOutcome] = {}

    # -- the Broker protocol ---------------------------------------------------------

    def snapshot(self) -> BrokerSnapshot:
        """From the view, which holds what the file does (cash, positions in the file's
        order, open orders oldest first), so nothing is read back for it."""
        now = self._settle()
        book = self._book()
        positions = dict(book.positions)
        marks = self._prices.of(list(positions), now)
        equity = book.cash + sum(
            p.qty * marks.get(sym, p.avg_entry_price) for sym, p in positions.items()
        )
        return BrokerSnapshot(book.cash, equity, positions, book.open_outcomes())

    def submit(self, intent: OrderIntent) -> OrderOutcome:
        return self.submit_many([intent])[0]

    def submit_many(self, intents: Sequence[OrderIntent]) -> list[OrderOutcome]:
        """Each intent's outcome, as `submit` one after another would give it (each
        checked against the account as the ones before it left it), all placed in one
        transaction: all or none of them reach the file. An id the account already holds
        answers that order; nothing is placed for it."""
        now = self._settle()
        if all(i.client_order_id in self._outcomes for i in intents):
            return [self._outcomes[i.client_order_id] for i in intents]  # nothing to place
        # priced before the transaction: no market read while the account is locked
        self._checks.price_all([i.symbol for i in intents], now)
        try:
            with self._account.transaction():
                return self._place(intents, now)
        except BaseException:
            self._view = None  # what it opened was not committed: read afresh next call
            raise

    def lookup(self, client_order_id: str) -> OrderOutcome | None:
        return self.lookup_many([client_order_id])[0]

    def lookup_many(self, client_order_ids: Sequence[str]) -> list[OrderOutcome | None]:
        """The broker's record of each order (None: it has none), from this bar's own
        writes, else the file (one read for all of them)."""
        self._settle()
        known = self._outcomes
        stored = self._account.stored([c for c in client_order_ids if c not in known])
        return [known.get(c) or stored.get(c) for c in client_order_ids]

    def recent_orders(self, since: datetime) -> tuple[PlacedOrder, ...]:
        """Submission times are market time (the bar in hand when each was sent)."""
        rows = self._account.submitted_since(utc(since))
        return tuple(PlacedOrder(r["client_order_id"], datetime.fromisoformat(r["submitted_at"]),
                                 r["symbol"]) for r in rows)

    def cancel(self, broker_order_id: str) -> None:
        self._settle()
        self._account.cancel(int(broker_order_id.removeprefix("sim-")))
        self._view = None  # rare: the next call reads the account again

    def market_open(self) -> bool:
        return True

    def close(self) -> None:
        self._account.close()

    # -- submission ------------------------------------------------------------------

    def _place(self, intents: Sequence[OrderIntent], now: datetime) -> list[OrderOutcome]:
        """Inside the transaction: the outcomes, the new orders numbered and inserted."""
        book, submitted_at = self._book(), now.isoformat()
        held = self._account.stored([i.client_order_id for i in intents
                                     if i.client_order_id not in self._outcomes])
        seq = self._account.last_seq()
        placed, outcomes = [], []
        for intent in intents:
            cid = intent.client_order_id
            known = self._outcomes.get(cid) or held.get(cid)
            if known is None:
                seq += 1
                known = self._decide(intent, seq, submitted_at, book, now)
                placed.append((seq, intent, known.status, submitted_at, known.reason))
            outcomes.append(known)
        self._account.add_orders(placed)
        return outcomes

    def _decide(self, intent: OrderIntent, seq: int, submitted_at: str, book: AccountView,
                now: datetime) -> OrderOutcome:
        """The new order's outcome; an accepted one is opened in the view at once, so the
        next order of the batch is checked against it."""
        reason = self._checks.refusal(intent, book, now)
        status = OrderStatus.REJECTED if reason else OrderStatus.ACCEPTED
        if status is OrderStatus.ACCEPTED:  # qty as the file's REAL column gives it back
            order = OpenOrder(seq, intent.client_order_id, intent.symbol, intent.side.value,
                              float(intent.qty), submitted_at)
            book.opened(order)
            self._checks.opened(order, book, now)
        outcome = OrderOutcome(intent.client_order_id, status, sim_order_id(seq),
                               reason=reason, symbol=intent.symbol, side=intent.side)
        self._outcomes[intent.client_order_id] = outcome
        return outcome

    def _book(self) -> AccountView:
        assert self._view is not None  # read by every _settle, which every call makes first
        return self._view

    # -- fills -----------------------------------------------------------------------

    def _settle(self) -> datetime:
        """Fill every open order whose next bar has closed by now(); return now().

        All of them in one transaction, the positions read once and carried from fill to
        fill: an update's settle fills one order per instrument, and a read of every
        position and a commit per fill made it quadratic in the instruments."""
        now = utc(self._now())
        stale = self._written_elsewhere()
        if now == self._settled_at and not stale:
            return now
        if stale:
            self._view = self._account.view()
        self._checks.reset()
        self._outcomes = {}
        fills = due_fills(self._book(), now, self._market)
        if fills:
            self._record_fills(fills)
        self._settled_at = now
        return now

    def _record_fills(self, fills: list[Fill]) -> None:
        """The fills into the file, then into the view and the outcomes of this bar."""
        try:
            cash = self._account.record_fills(fills)
        except BaseException:
            self._view = None  # read afresh at the next call, whatever was committed
            raise
        self._book().filled(fills, cash)
        self._outcomes = {fill.order.client_order_id: fill.outcome() for fill in fills}

    def _written_elsewhere(self) -> bool:
        """Another connection committed to the account since our view of it was read."""
        return self._view is None or self._account.data_version() != self._view.version
