"""The simulated broker's submission checks: buying power (cash less open buys, at the
latest close) for a buy and, unless short selling is on, the sellable quantity (held less
open sells) for a sell. They read the broker's view of the account (sim_book), which the
broker keeps current; only the open buys' cost is kept here, for the bar in hand."""

from __future__ import annotations

from contextlib import suppress
from datetime import datetime

from service.broker.sim_book import AccountView, OpenOrder
from service.broker.sim_prices import LatestCloses, OpenBuyCost
from service.market.base import MarketDataError
from service.types import OrderIntent, Side, Symbol

QTY_EPS = 1e-9  # positions smaller than this are flat


class SubmissionChecks:
    def __init__(self, prices: LatestCloses, allow_short: bool) -> None:
        self._prices = prices
        self._allow_short = allow_short
        self._buys: OpenBuyCost | None = None  # for the account and bar of the last reset

    def reset(self) -> None:
        """The bar moved on, or the account changed other than by an order accepted here
        (a fill, a cancel, another connection's write): the open buys are summed again."""
        self._buys = None

    def price_all(self, symbols: list[Symbol], now: datetime) -> None:
        """Read these symbols' closes in one market read, before checking their orders one
        by one (each would read its own). A read that fails is left to those checks: each
        asks for its own symbol again and says why it cannot be priced."""
        with suppress(MarketDataError):
            self._prices.of(symbols, now)

    def refusal(self, intent: OrderIntent, book: AccountView, now: datetime) -> str | None:
        """Why this order is rejected, or None to accept it."""
        try:
            price = self._prices.close(intent.symbol, now)
        except MarketDataError as err:  # the market cannot price it: refuse, as a broker would
            return f"no market data for {intent.symbol}: {err}"
        if price is None:
            return f"no price for {intent.symbol} at or before {now.isoformat()}"
        if intent.side == Side.BUY:
            return self._buy_refusal(intent, price, book, now)
        return None if self._allow_short else _sell_refusal(intent, book)

    def opened(self, order: OpenOrder, book: AccountView, now: datetime) -> None:
        """`order` was just accepted (and is in `book`): a buy adds to the open buys."""
        if order.side == Side.BUY and self._buys is not None:
            close = self._prices.close(order.symbol, now)
            assert close is not None  # the check that accepted it priced it
            self._buys.set(order.symbol, book.open_qty(order.symbol, Side.BUY), close)

    def _buy_refusal(
        self, intent: OrderIntent, price: float, book: AccountView, now: datetime
    ) -> str | None:
        cost = intent.qty * price
        power = book.cash - self._open_buy_cost(book, now)
        if cost <= power:
            return None
        return (f"insufficient buying power: buy {intent.qty} {intent.symbol} at ~{price:.4f} "
                f"costs {cost:.2f} but buying power is {power:.2f}")

    def _open_buy_cost(self, book: AccountView, now: datetime) -> float:
        if self._buys is None:
            rows = book.open_buys()
            self._buys = OpenBuyCost(rows, self._prices.of([r[0] for r in rows], now))
        return self._buys.total


def _sell_refusal(intent: OrderIntent, book: AccountView) -> str | None:
    held = book.positions.get(intent.symbol)
    sellable = (held.qty if held else 0.0) - book.open_qty(intent.symbol, Side.SELL)
    if intent.qty <= sellable + QTY_EPS:
        return None
    return (f"insufficient qty: sell {intent.qty} {intent.symbol} but only {sellable} is "
            "held and not already being sold (short selling is off)")
