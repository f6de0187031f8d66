"""An in-process simulated broker that behaves like a remote one.

Its account lives in its OWN SQLite file (WAL, one transaction per mutation), so it
outlives a crashed worker the way a real broker would (sim_account says why a power loss
may cost it its last orders, and why that is safe). Market time comes
from `now()` (the bar the worker is processing); nothing else about time is stored.
That file is the broker's, not the state database: as a remote broker keeps its books
to itself, the SQL on it lives in sim_account (and sim_book_rows), outside service.state.

Orders are market orders. A submitted order fills in full at the OPEN of the first bar
whose time is after its submission, once that bar's time is <= now(). Fills are
processed lazily at the start of every call. Submission checks buying power (cash less
open buys, at the latest close) and, unless `allow_short`, the sellable quantity (held
less open sells); a fill itself is never refused, so a buy that gaps up can leave cash
slightly negative.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from service.broker.base import PlacedOrder
from service.broker.sim_account import SimAccount
from service.broker.sim_book import AccountView, OpenOrder, sim_order_id
from service.market.base import MarketDataError, MarketFeed
from service.types import (
    Bar,
    BrokerSnapshot,
    OrderIntent,
    OrderOutcome,
    OrderStatus,
    Position,
    Side,
    Symbol,
    utc,
)

_QTY_EPS = 1e-9  # positions smaller than this are flat


def _signed(side: str, qty: float) -> float:
    return qty if side == Side.BUY else -qty


def next_position(
    symbol: Symbol, held: Position | None, delta: float, price: float
) -> Position | None:
    """The position after trading `delta` (signed) at `price`; None when flat.
    Adding to a position averages the entry price; reducing keeps it; flipping resets it."""
    qty, avg = (held.qty, held.avg_entry_price) if held else (0.0, price)
    new_qty = qty + delta
    if abs(new_qty) < _QTY_EPS:
        return None
    if qty * delta >= 0:
        return Position(symbol, new_qty, (abs(qty) * avg + abs(delta) * price) / abs(new_qty))
    return Position(symbol, new_qty, avg if qty * new_qty > 0 else price)


class SimBroker:
    """The Broker protocol over a local SQLite account and a MarketFeed for prices."""

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
        self._allow_short = allow_short
        self._account = SimAccount(db_path, starting_cash)
        # The time of the last settle: an order fills at the open of the first bar after
        # its submission, so at an unchanged now() nothing more can fill (an order placed
        # meanwhile was placed at now() and waits for a later bar), and the broker calls
        # of one update, one per instrument, settle once instead of once each.
        self._settled_at: datetime | None = None
        # Latest closes at _marks_at: prices do not move within one now(), and an update
        # asks for one per order (the buying-power check) after its snapshot read them all.
        self._marks: dict[Symbol, float] = {}
        self._marks_at: datetime | None = None
        # The account as of the last settle, kept current by this broker's own writes:
        # an order's checks read it instead of the file (service.broker.sim_book).
        self._view: AccountView | None = None
        # The outcomes of the orders this broker accepted or filled at _settled_at: what a
        # lookup of them would read back from the file (the update's reconcile asks for
        # each order it sent one bar before, just filled by the settle).
        self._outcomes: dict[str, OrderOutcome] = {}

    # -- the Broker protocol ---------------------------------------------------------

    def snapshot(self) -> BrokerSnapshot:
        now = self._settle()
        positions = self._account.positions()
        marks = self._latest_closes(list(positions), now)
        equity = self._account.cash() + sum(
            p.qty * marks.get(sym, p.avg_entry_price) for sym, p in positions.items()
        )
        return BrokerSnapshot(self._account.cash(), equity, positions,
                              self._account.open_orders())

    def submit(self, intent: OrderIntent) -> OrderOutcome:
        now = self._settle()
        known = self._outcomes.get(intent.client_order_id)
        if known is not None:
            return known
        reason = self._refusal(intent, now)
        status = OrderStatus.REJECTED if reason else OrderStatus.ACCEPTED
        submitted_at = now.isoformat()
        seq = self._account.add_order(intent, status, submitted_at, reason)
        if seq is None:  # an id this account already holds: that order, nothing placed
            held = self._account.stored(intent.client_order_id)
            assert held is not None  # the insert met it
            return held
        if status is OrderStatus.ACCEPTED:  # qty as the file's REAL column gives it back
            order = OpenOrder(seq, intent.client_order_id, intent.symbol, intent.side.value,
                              float(intent.qty), submitted_at)
            self._book().opened(order)
        outcome = OrderOutcome(intent.client_order_id, status, sim_order_id(seq),
                               reason=reason, symbol=intent.symbol, side=intent.side)
        self._outcomes[intent.client_order_id] = outcome
        return outcome

    def lookup(self, client_order_id: str) -> OrderOutcome | None:
        self._settle()
        return self._known(client_order_id)

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

    # -- submission checks -----------------------------------------------------------

    def _refusal(self, intent: OrderIntent, now: datetime) -> str | None:
        """Why this order is rejected, or None to accept it."""
        try:
            price = self._latest_closes([intent.symbol], now).get(intent.symbol)
        except MarketDataError as err:  # the market cannot price it: refuse, as a broker would
            return f"no market data for {intent.symbol}: {err}"
        if price is None:
            return f"no price for {intent.symbol} at or before {now.isoformat()}"
        if intent.side == Side.BUY:
            return self._buy_refusal(intent, price, now)
        return None if self._allow_short else self._sell_refusal(intent)

    def _sell_refusal(self, intent: OrderIntent) -> str | None:
        book = self._book()
        held = book.positions.get(intent.symbol)
        sellable = (held.qty if held else 0.0) - book.open_qty(intent.symbol, Side.SELL)
        if intent.qty <= sellable + _QTY_EPS:
            return None
        return (f"insufficient qty: sell {intent.qty} {intent.symbol} but only {sellable} is "
                "held and not already being sold (short selling is off)")

    def _buy_refusal(self, intent: OrderIntent, price: float, now: datetime) -> str | None:
        cost = intent.qty * price
        power = self._book().cash - self._open_buy_cost(now)
        if cost <= power:
            return None
        return (f"insufficient buying power: buy {intent.qty} {intent.symbol} at ~{price:.4f} "
                f"costs {cost:.2f} but buying power is {power:.2f}")

    def _open_buy_cost(self, now: datetime) -> float:
        rows = self._book().open_buys()
        marks = self._latest_closes([r[0] for r in rows], now)
        return float(sum(qty * marks.get(sym, 0.0) for sym, qty in rows))

    def _book(self) -> AccountView:
        assert self._view is not None  # read by every _settle, which every call makes first
        return self._view

    def _known(self, client_order_id: str) -> OrderOutcome | None:
        """The broker's record of this order: from this bar's own writes, else the file."""
        known = self._outcomes.get(client_order_id)
        return known if known is not None else self._account.stored(client_order_id)

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
        self._outcomes = {}
        fills = self._fills(self._book(), now)
        if fills:
            self._record_fills(fills)
        self._settled_at = now
        return now

    def _record_fills(self, fills: list[tuple[OpenOrder, Bar, float, Position | None]]) -> None:
        """The fills into the file, then into the view and the outcomes of this bar."""
        try:
            self._account.record_fills(fills)
        except BaseException:
            self._view = None  # read afresh at the next call, whatever was committed
            raise
        self._book().filled([(order, after) for order, _, _, after in fills],
                            self._account.cash())
        self._outcomes = {order.client_order_id: order.filled_at(bar.open)
                          for order, bar, _, _ in fills}

    def _written_elsewhere(self) -> bool:
        """Another connection committed to the account since our view of it was read."""
        return self._view is None or self._account.data_version() != self._view.version

    def _fills(
        self, view: AccountView, now: datetime
    ) -> list[tuple[OpenOrder, Bar, float, Position | None]]:
        """Each open order that fills by `now`, with its bar, signed quantity and the
        position it leaves, in order (a position carried from fill to fill)."""
        held = dict(view.positions)
        fill_bars = self._fill_bars(view.open_orders, now)
        fills = []
        for order in view.open_orders:
            bar = fill_bars.get((order.symbol, order.submitted_at))
            if bar is not None:
                symbol, delta = order.symbol, _signed(order.side, order.qty)
                after = next_position(symbol, held.get(symbol), delta, bar.open)
                fills.append((order, bar, delta, after))
                if after is None:
                    held.pop(symbol, None)
                else:
                    held[symbol] = after
        return fills

    def _fill_bars(
        self, unfilled: list[OpenOrder], now: datetime
    ) -> dict[tuple[Symbol, str], Bar]:
        """The bar each open order fills at, by (symbol, submitted_at): one market read per
        submission time (an update's orders share theirs), not one per order."""
        by_time: dict[str, set[Symbol]] = {}
        for order in unfilled:
            by_time.setdefault(order.submitted_at, set()).add(order.symbol)
        found = {}
        for submitted_at, symbols in by_time.items():
            after = datetime.fromisoformat(submitted_at)
            bars = self._market.bars_after(dict.fromkeys(sorted(symbols), after), now)
            found.update({(sym, submitted_at): got[0] for sym, got in bars.items() if got})
        return found

    # -- prices ----------------------------------------------------------------------

    def _latest_closes(self, symbols: list[Symbol], now: datetime) -> dict[Symbol, float]:
        """The latest close at or before `now` of each symbol that has one."""
        if now != self._marks_at:
            self._marks, self._marks_at = {}, now
        missing = [s for s in symbols if s not in self._marks]
        if missing:
            history = self._market.history(missing, now, 1)
            self._marks.update({sym: bars[-1].close for sym, bars in history.items() if bars})
        return {s: self._marks[s] for s in symbols if s in self._marks}
