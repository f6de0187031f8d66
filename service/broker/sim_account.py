"""The simulated broker's account file: its schema, one transaction per mutation, and
every read and write of its cash, orders, positions and fills.

WAL with synchronous=NORMAL: a committed mutation survives a crashed worker (the kernel
holds it) the way a remote broker's books would, without an fsync per order. A power loss
may roll back the last orders and fills; the worker's own state database (FULL) still holds
their intents, so at the next start it finds them unknown to this broker and sends them
again by client_order_id, as after a POST that never arrived, and reconciliation adopts
the positions this broker then shows. The rules (what is refused, when and at what an order
fills) are SimBroker's; this module only stores their results.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from itertools import groupby
from pathlib import Path

from service.broker.sim_book import AccountView, Fill, OpenOrder, sim_order_id
from service.state.sqlite_open import open_sqlite
from service.types import OrderIntent, OrderOutcome, OrderStatus, Position, Side, Symbol

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

# seq, intent, status, submitted_at (market time, UTC isoformat), reason refused
NewOrder = tuple[int, OrderIntent, OrderStatus, str, str | None]
_IDS_PER_READ = 500  # bound parameters per statement (SQLite's least limit is 999)
_ORDER_COLUMNS = (
    "seq, client_order_id, status, filled_qty, filled_avg_price, reason, symbol, side"
)


def _outcome(row: sqlite3.Row) -> OrderOutcome:
    return OrderOutcome(
        client_order_id=row["client_order_id"],
        status=OrderStatus(row["status"]),
        broker_order_id=sim_order_id(row["seq"]),
        filled_qty=row["filled_qty"],
        filled_avg_price=row["filled_avg_price"],
        reason=row["reason"],
        symbol=row["symbol"],
        side=Side(row["side"]),
    )


class SimAccount:
    def __init__(self, db_path: Path | str, starting_cash: float) -> None:
        """Open (or create, funded with `starting_cash`) the account at `db_path`; an
        existing account keeps its own cash whatever `starting_cash` says."""
        self._db = open_sqlite(Path(db_path))  # a percent-encoded URI: any legal path
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        with self.transaction():
            for statement in _SCHEMA.split(";"):  # not executescript: it commits first
                self._db.execute(statement)
            self._db.execute(
                "INSERT OR IGNORE INTO account (id, cash) VALUES (1, ?)", (starting_cash,)
            )

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- orders ----------------------------------------------------------------------

    def stored(self, client_order_ids: Sequence[str]) -> dict[str, OrderOutcome]:
        """The orders of these client_order_ids that the account holds, by id."""
        found: dict[str, OrderOutcome] = {}
        for start in range(0, len(client_order_ids), _IDS_PER_READ):
            ids = client_order_ids[start:start + _IDS_PER_READ]
            rows = self._db.execute(
                f"SELECT {_ORDER_COLUMNS} FROM orders WHERE client_order_id IN "
                f"({','.join('?' * len(ids))})", ids)
            found.update((row["client_order_id"], _outcome(row)) for row in rows)
        return found

    def submitted_since(self, since: datetime) -> list[sqlite3.Row]:
        """client_order_id, symbol, submitted_at of the orders submitted after `since`,
        newest first. Every stored time is UTC `isoformat()` (with a fraction only when it
        has microseconds, and '+' sorts before '.'), so text order is time order."""
        return self._db.execute(
            "SELECT client_order_id, symbol, submitted_at FROM orders WHERE submitted_at > ? "
            "ORDER BY submitted_at DESC, seq DESC",
            (since.isoformat(),),
        ).fetchall()

    def last_seq(self) -> int:
        """The newest order's seq (0: none yet); the next order's is one more, as SQLite
        would number it (the largest rowid plus one)."""
        return int(self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM orders").fetchone()[0])

    def add_orders(self, orders: list[NewOrder]) -> None:
        """Insert (seq, intent, status, submitted_at, reason) rows; inside a transaction
        that first found none of their ids held (stored) and numbered them (last_seq)."""
        self._db.executemany(
            "INSERT INTO orders (seq, client_order_id, symbol, side, qty, status, "
            "submitted_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(seq, i.client_order_id, i.symbol, i.side.value, i.qty, status.value, at, reason)
             for seq, i, status, at, reason in orders],
        )

    def cancel(self, seq: int) -> None:
        with self.transaction():
            self._db.execute(
                "UPDATE orders SET status = ?, reason = ? WHERE seq = ? AND status = ?",
                (OrderStatus.CANCELED.value, "canceled on request", seq,
                 OrderStatus.ACCEPTED.value),
            )

    def unfilled(self) -> list[OpenOrder]:
        """Accepted orders, oldest first."""
        rows = self._db.execute(
            "SELECT seq, client_order_id, symbol, side, qty, submitted_at, reason FROM orders "
            "WHERE status = ? ORDER BY seq",
            (OrderStatus.ACCEPTED.value,),
        )
        return [OpenOrder(*row) for row in rows]

    # -- fills -----------------------------------------------------------------------

    def record_fills(self, fills: list[Fill]) -> float:
        """Record each fill in order: cash, the position, the order and its fill; all in
        one transaction, each kind of row written by one statement over every fill (same
        rows, same order). Returns the cash they leave: each fill's amount taken from it
        in turn, the arithmetic (IEEE doubles) of one `cash = cash - ?` per fill."""
        filled = OrderStatus.FILLED.value
        with self.transaction():
            cash = self.cash()
            for fill in fills:
                cash = cash - fill.delta * fill.price
            self._db.execute("UPDATE account SET cash = ? WHERE id = 1", (cash,))
            self._store_positions([(fill.order.symbol, fill.after) for fill in fills])
            self._db.executemany(
                "UPDATE orders SET status = ?, filled_qty = ?, filled_avg_price = ? "
                "WHERE seq = ?",
                [(filled, order.qty, price, order.seq) for order, _, price, _, _ in fills],
            )
            times = {time: time.isoformat() for time in {fill.time for fill in fills}}
            self._db.executemany(
                "INSERT INTO fills (order_seq, symbol, side, qty, price, bar_time) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(order.seq, order.symbol, order.side, order.qty, price, times[time])
                 for order, time, price, _, _ in fills],
            )
        return cash

    def _store_positions(self, changes: list[tuple[Symbol, Position | None]]) -> None:
        """Each change in order: a run of deletions (a position closed) or of upserts at a
        time, so every row is written as one statement per change would write it."""
        for closed, run in groupby(changes, key=lambda change: change[1] is None):
            if closed:
                self._db.executemany("DELETE FROM positions WHERE symbol = ?",
                                     [(symbol,) for symbol, _ in run])
                continue
            self._db.executemany(
                "INSERT INTO positions (symbol, qty, avg_entry_price) VALUES (?, ?, ?) "
                "ON CONFLICT (symbol) DO UPDATE SET qty = excluded.qty, "
                "avg_entry_price = excluded.avg_entry_price",
                [(symbol, p.qty, p.avg_entry_price) for symbol, p in run if p is not None],
            )

    # -- reads -----------------------------------------------------------------------

    def cash(self) -> float:
        return float(self._db.execute("SELECT cash FROM account WHERE id = 1").fetchone()[0])

    def positions(self) -> dict[Symbol, Position]:
        rows = self._db.execute("SELECT symbol, qty, avg_entry_price FROM positions")
        return {r["symbol"]: Position(r["symbol"], r["qty"], r["avg_entry_price"]) for r in rows}

    def data_version(self) -> int:
        """Changes when another connection commits to the file (never for our own)."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    def view(self) -> AccountView:
        """Cash, positions and open orders, read now (service.broker.sim_book)."""
        version = self.data_version()  # first: a commit by another connection after it
        # is seen at the next check, never folded unseen into a view that claims it
        return AccountView(self.cash(), self.positions(), self.unfilled(), version)
