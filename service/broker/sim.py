"""An in-process simulated broker that behaves like a remote one.

Its account lives in its OWN SQLite file (WAL, synchronous=FULL, one transaction per
mutation), so it outlives a crashed worker the way a real broker would. Market time comes
from `now()` (the bar the worker is processing); nothing else about time is stored.

Orders are market orders. A submitted order fills in full at the OPEN of the first bar
whose time is after its submission, once that bar's time is <= now(). Fills are
processed lazily at the start of every call. Submission checks buying power (cash less
open buys, at the latest close) and, unless `allow_short`, the sellable quantity (held
less open sells); a fill itself is never refused, so a buy that gaps up can leave cash
slightly negative.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from service.market.base import MarketDataError, MarketFeed
from service.state.sqlite_open import open_sqlite
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

_SCHEMA = """
CREATE TABLE IF NOT EXISTS account (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    cash REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS orders (
    seq INTEGER PRIMARY KEY,
    client_order_id TEXT NOT NULL UNIQUE,
    symbol TEXT NOT NULL,
    side TEXT NOT NULL,
    qty REAL NOT NULL,
    status TEXT NOT NULL,
    submitted_at TEXT NOT NULL,
    filled_qty REAL NOT NULL DEFAULT 0,
    filled_avg_price REAL,
    reason TEXT
);
CREATE TABLE IF NOT EXISTS positions (
    symbol TEXT PRIMARY KEY,
    qty REAL NOT NULL,
    avg_entry_price REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS fills (
    seq INTEGER PRIMARY KEY,
    order_seq INTEGER NOT NULL UNIQUE REFERENCES orders (seq),
    symbol TEXT NOT NULL,
    side TEXT NOT NULL,
    qty REAL NOT NULL,
    price REAL NOT NULL,
    bar_time TEXT NOT NULL
);
"""

_ORDER_COLUMNS = (
    "seq, client_order_id, status, filled_qty, filled_avg_price, reason, symbol, side"
)


def _outcome(row: sqlite3.Row) -> OrderOutcome:
    return OrderOutcome(
        client_order_id=row["client_order_id"],
        status=OrderStatus(row["status"]),
        broker_order_id=f"sim-{row['seq']:08d}",
        filled_qty=row["filled_qty"],
        filled_avg_price=row["filled_avg_price"],
        reason=row["reason"],
        symbol=row["symbol"],
        side=Side(row["side"]),
    )


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
        self._db = open_sqlite(Path(db_path))  # a percent-encoded URI: any legal path
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        with self._transaction():
            for statement in _SCHEMA.split(";"):  # not executescript: it commits first
                self._db.execute(statement)
            self._db.execute(
                "INSERT OR IGNORE INTO account (id, cash) VALUES (1, ?)", (starting_cash,)
            )

    # -- the Broker protocol ---------------------------------------------------------

    def snapshot(self) -> BrokerSnapshot:
        now = self._settle()
        positions = self._positions()
        marks = self._latest_closes(list(positions), now)
        equity = self._cash() + sum(
            p.qty * marks.get(sym, p.avg_entry_price) for sym, p in positions.items()
        )
        rows = self._db.execute(
            f"SELECT {_ORDER_COLUMNS} FROM orders WHERE status = ? ORDER BY seq",
            (OrderStatus.ACCEPTED.value,),
        )
        return BrokerSnapshot(self._cash(), equity, positions, tuple(map(_outcome, rows)))

    def submit(self, intent: OrderIntent) -> OrderOutcome:
        now = self._settle()
        known = self._stored(intent.client_order_id)
        if known is not None:
            return known
        reason = self._refusal(intent, now)
        status = OrderStatus.REJECTED if reason else OrderStatus.ACCEPTED
        with self._transaction():
            self._db.execute(
                "INSERT INTO orders (client_order_id, symbol, side, qty, status, submitted_at,"
                " reason) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (intent.client_order_id, intent.symbol, intent.side.value, intent.qty,
                 status.value, now.isoformat(), reason),
            )
        outcome = self._stored(intent.client_order_id)
        assert outcome is not None  # inserted just above
        return outcome

    def lookup(self, client_order_id: str) -> OrderOutcome | None:
        self._settle()
        return self._stored(client_order_id)

    def cancel(self, broker_order_id: str) -> None:
        self._settle()
        seq = int(broker_order_id.removeprefix("sim-"))
        with self._transaction():
            self._db.execute(
                "UPDATE orders SET status = ?, reason = ? WHERE seq = ? AND status = ?",
                (OrderStatus.CANCELED.value, "canceled on request", seq,
                 OrderStatus.ACCEPTED.value),
            )

    def market_open(self) -> bool:
        return True

    def close(self) -> None:
        self._db.close()

    def _stored(self, client_order_id: str) -> OrderOutcome | None:
        """The stored record, without processing fills first."""
        row = self._db.execute(
            f"SELECT {_ORDER_COLUMNS} FROM orders WHERE client_order_id = ?",
            (client_order_id,),
        ).fetchone()
        return _outcome(row) if row is not None else None

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
        held = self._positions().get(intent.symbol)
        sellable = (held.qty if held else 0.0) - self._open_qty(intent.symbol, Side.SELL)
        if intent.qty <= sellable + _QTY_EPS:
            return None
        return (f"insufficient qty: sell {intent.qty} {intent.symbol} but only {sellable} is "
                "held and not already being sold (short selling is off)")

    def _buy_refusal(self, intent: OrderIntent, price: float, now: datetime) -> str | None:
        cost = intent.qty * price
        power = self._cash() - self._open_buy_cost(now)
        if cost <= power:
            return None
        return (f"insufficient buying power: buy {intent.qty} {intent.symbol} at ~{price:.4f} "
                f"costs {cost:.2f} but buying power is {power:.2f}")

    def _open_qty(self, symbol: Symbol, side: Side) -> float:
        row = self._db.execute(
            "SELECT COALESCE(SUM(qty), 0) FROM orders WHERE symbol = ? AND side = ? "
            "AND status = ?",
            (symbol, side.value, OrderStatus.ACCEPTED.value),
        ).fetchone()
        return float(row[0])

    def _open_buy_cost(self, now: datetime) -> float:
        rows = self._db.execute(
            "SELECT symbol, SUM(qty) FROM orders WHERE side = ? AND status = ? GROUP BY symbol",
            (Side.BUY.value, OrderStatus.ACCEPTED.value),
        ).fetchall()
        marks = self._latest_closes([r[0] for r in rows], now)
        return float(sum(qty * marks.get(sym, 0.0) for sym, qty in rows))

    # -- fills -----------------------------------------------------------------------

    def _settle(self) -> datetime:
        """Fill every open order whose next bar has closed by now(); return now()."""
        now = utc(self._now())
        rows = self._db.execute(
            "SELECT seq, symbol, side, qty, submitted_at FROM orders WHERE status = ? "
            "ORDER BY seq",
            (OrderStatus.ACCEPTED.value,),
        ).fetchall()
        for row in rows:
            bar = self._fill_bar(row["symbol"], datetime.fromisoformat(row["submitted_at"]), now)
            if bar is not None:
                self._fill(row, bar)
        return now

    def _fill_bar(self, symbol: Symbol, submitted_at: datetime, now: datetime) -> Bar | None:
        bars = self._market.bars_after({symbol: submitted_at}, now).get(symbol, [])
        return bars[0] if bars else None

    def _fill(self, order: sqlite3.Row, bar: Bar) -> None:
        symbol, side, qty, price = order["symbol"], order["side"], order["qty"], bar.open
        after = next_position(symbol, self._positions().get(symbol), _signed(side, qty), price)
        with self._transaction():
            self._db.execute("UPDATE account SET cash = cash - ? WHERE id = 1",
                             (_signed(side, qty) * price,))
            self._store_position(symbol, after)
            self._db.execute(
                "UPDATE orders SET status = ?, filled_qty = ?, filled_avg_price = ? "
                "WHERE seq = ?",
                (OrderStatus.FILLED.value, qty, price, order["seq"]),
            )
            self._db.execute(
                "INSERT INTO fills (order_seq, symbol, side, qty, price, bar_time) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (order["seq"], symbol, side, qty, price, bar.time.isoformat()),
            )

    def _store_position(self, symbol: Symbol, position: Position | None) -> None:
        if position is None:
            self._db.execute("DELETE FROM positions WHERE symbol = ?", (symbol,))
            return
        self._db.execute(
            "INSERT INTO positions (symbol, qty, avg_entry_price) VALUES (?, ?, ?) "
            "ON CONFLICT (symbol) DO UPDATE SET qty = excluded.qty, "
            "avg_entry_price = excluded.avg_entry_price",
            (symbol, position.qty, position.avg_entry_price),
        )

    # -- reads -----------------------------------------------------------------------

    def _cash(self) -> float:
        return float(self._db.execute("SELECT cash FROM account WHERE id = 1").fetchone()[0])

    def _positions(self) -> dict[Symbol, Position]:
        rows = self._db.execute("SELECT symbol, qty, avg_entry_price FROM positions")
        return {r["symbol"]: Position(r["symbol"], r["qty"], r["avg_entry_price"]) for r in rows}

    def _latest_closes(self, symbols: list[Symbol], now: datetime) -> dict[Symbol, float]:
        if not symbols:
            return {}
        history = self._market.history(symbols, now, 1)
        return {sym: bars[-1].close for sym, bars in history.items() if bars}

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")
