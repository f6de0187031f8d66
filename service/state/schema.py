"""The state database's schema, its version, and its identity.

Identity (meta keys, added in this release; a database of the previous release gets them
on first open, in one transaction): the account that owns it, and the epoch of its client
order ids (service.state.order_ids). Both are copied into the main file at once (a WAL
checkpoint), so a lost -wal file cannot take them along.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from service.state.errors import UnusableStateError
from service.state.order_ids import EPOCH_RE, OrderIds, new_epoch

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS checkpoints (
    seq INTEGER PRIMARY KEY,
    bar_time TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    backend TEXT NOT NULL,
    adapter TEXT NOT NULL,
    numerics TEXT NOT NULL,
    cash REAL NOT NULL,
    equity REAL NOT NULL,
    model BLOB NOT NULL,
    model_digest TEXT NOT NULL,
    book TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER NOT NULL,
    symbol TEXT NOT NULL,
    regime INTEGER NOT NULL,
    p_turbulent REAL NOT NULL,
    pred_mean REAL NOT NULL,
    pred_vol REAL NOT NULL,
    converged INTEGER NOT NULL,
    target_weight REAL NOT NULL,
    target_qty REAL NOT NULL,
    PRIMARY KEY (seq, symbol)
);
CREATE TABLE IF NOT EXISTS intents (
    client_order_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    symbol TEXT NOT NULL,
    side TEXT NOT NULL,
    qty REAL NOT NULL,
    status TEXT NOT NULL,
    broker_order_id TEXT,
    filled_qty REAL NOT NULL DEFAULT 0,
    filled_avg_price REAL,
    reason TEXT
);
CREATE INDEX IF NOT EXISTS intents_by_status ON intents (status);
"""

ACCOUNT_KEY = "account"
EPOCH_KEY = "order_epoch"
LEGACY_KEY = "legacy_order_ids"  # "1": ids without an epoch (previous release) are ours


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def check_version(conn: sqlite3.Connection, path: Path) -> None:
    found = _meta(conn, "schema_version")
    if found is not None and found != str(SCHEMA_VERSION):
        raise UnusableStateError(
            f"{path}: schema version {found}, this build reads {SCHEMA_VERSION}; "
            "use the matching regime-trader version"
        )


def identity(conn: sqlite3.Connection, path: Path, account: str | None) -> OrderIds:
    """The database's owner and order epoch, stamped first where missing. A database of
    another account is refused: trading on it would resume that account's state."""
    if _needs_stamp(conn, account):
        _stamp(conn, account)
    owner, epoch = _meta(conn, ACCOUNT_KEY), _meta(conn, EPOCH_KEY)
    if owner is not None and account is not None and owner != account:
        raise UnusableStateError(
            f"{path}: this state database belongs to account {owner!r}, not {account!r}; "
            f"put {account!r}'s own database there (or move this one aside to start "
            f"{account!r} afresh), and check that two accounts do not share a file"
        )
    if epoch is None or not EPOCH_RE.match(epoch):
        raise UnusableStateError(f"{path}: malformed order epoch {epoch!r}; restore a backup")
    return OrderIds(owner or account or "", epoch, _meta(conn, LEGACY_KEY) == "1")


def _needs_stamp(conn: sqlite3.Connection, account: str | None) -> bool:
    missing_owner = account is not None and _meta(conn, ACCOUNT_KEY) is None
    return missing_owner or any(_meta(conn, k) is None for k in ("schema_version", EPOCH_KEY))


def _stamp(conn: sqlite3.Connection, account: str | None) -> None:
    """One transaction, then into the main file (a checkpoint of the WAL)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        _stamp_missing(conn, account)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(FULL)")


def _stamp_missing(conn: sqlite3.Connection, account: str | None) -> None:
    insert = "INSERT OR IGNORE INTO meta VALUES (?, ?)"
    conn.execute(insert, ("schema_version", str(SCHEMA_VERSION)))
    if account is not None:
        conn.execute(insert, (ACCOUNT_KEY, account))
    if _meta(conn, EPOCH_KEY) is None:
        made_ids = conn.execute("SELECT 1 FROM intents LIMIT 1").fetchone() is not None
        conn.execute(insert, (LEGACY_KEY, "1" if made_ids else "0"))
        conn.execute(insert, (EPOCH_KEY, new_epoch()))
