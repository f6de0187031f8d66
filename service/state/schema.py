"""The state database's schema, its version, its migrations, and its identity.

A database records the version it was last migrated to (meta `schema_version`). Opening
one for writing runs, in one transaction, every migration above that version, in order;
a version newer than this build's is refused. Read-only readers (`status`, the history)
accept every version from READABLE_FROM up: the one migration that changed a table they
read (8: decisions and instrument_history packed) is read in both forms
(`decisions_packed`).

Identity: the account that owns the database, and the epoch of its client order ids
(service.state.order_ids). Both are copied into the main file at once (a WAL checkpoint),
so a lost -wal file cannot take them along.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from service.state import decision_columns
from service.state.errors import UnusableStateError
from service.state.order_ids import EPOCH_RE, OrderIds, new_epoch
from service.state.returns_packing import pack_tables

SCHEMA_VERSION = 9
READABLE_FROM = 1  # the oldest version whose tables `status` and `last_seq` can read
PACKED_DECISIONS = 8  # the version from which decisions and instrument_history are packed

# Version 1: the tables. CREATE ... IF NOT EXISTS, so it is also a no-op on any later version.
# `decisions` (and HISTORY_SCHEMA's `instrument_history`) in their form up to version 7, a
# row per instrument and update: a new database has them so, and migration 8, which it runs
# too, packs them one row per update (service.state.decision_columns).
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

# Version 3: what the operator's charts and reports read, one row per update (and per
# instrument modelled in it, until version 8 packs them one row per update). Created by
# SCHEMA too, so a new database has them at once.
HISTORY_SCHEMA = """
CREATE TABLE IF NOT EXISTS equity_history (
    seq INTEGER PRIMARY KEY,
    bar_time TEXT NOT NULL,
    equity REAL NOT NULL,
    cash REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS instrument_history (
    seq INTEGER NOT NULL,
    symbol TEXT NOT NULL,
    bar_time TEXT NOT NULL,
    close REAL NOT NULL,
    p_turbulent REAL NOT NULL,
    p_turbulent_sd REAL NOT NULL,
    regime INTEGER NOT NULL,
    converged INTEGER NOT NULL,
    target_qty REAL NOT NULL,
    position_qty REAL NOT NULL,
    PRIMARY KEY (seq, symbol)
);
"""

# Version 4: each instrument's returns once (`returns`: its idx-th return since it was first
# seen, numbered on past a removal so a symbol added again cannot overwrite the rows an
# older checkpoint still reads), and each checkpoint's window of them (`windows`: rows
# [start, stop)); the checkpoint's blob holds the carries and a SHA-256 of each window.
# Before, every checkpoint held every window whole (service.state.returns_rows). Created
# by migration 4 alone (a new database too runs every migration): version 7 packs them.
RETURNS_SCHEMA = """
CREATE TABLE IF NOT EXISTS returns (
    symbol TEXT NOT NULL,
    idx INTEGER NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (symbol, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS windows (
    seq INTEGER NOT NULL,
    symbol TEXT NOT NULL,
    start INTEGER NOT NULL,
    stop INTEGER NOT NULL,
    PRIMARY KEY (seq, symbol)
) WITHOUT ROWID;
"""
# Version 5: the same rows in the order updates write them (the update's seq leads the key).
# Keyed (symbol, idx), an update's one new return per instrument landed in a page of its
# own per instrument: at 268 instruments it rewrote ~270 pages (1.1 MB of WAL) for 2 KB of
# data. Resume and pruning read the table whole instead (service.state.returns_rows).
RETURNS_IN_WRITE_ORDER = """
CREATE TABLE returns_by_seq (
    seq INTEGER NOT NULL,
    symbol TEXT NOT NULL,
    idx INTEGER NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (seq, symbol, idx)
) WITHOUT ROWID;
INSERT INTO returns_by_seq SELECT 0, symbol, idx, value FROM returns;
DROP TABLE returns;
ALTER TABLE returns_by_seq RENAME TO returns;
"""
# Version 9: each checkpoint's sampler carries, a row keyed by its seq (carry_stacks.CarryBlob),
# their SHA-256 in its blob; with [model] sample_between_bars written between bars, in a
# transaction of their own, off the bar's synced commit (carry_stacks.CarriesAhead).
CARRIES_SCHEMA = """
CREATE TABLE IF NOT EXISTS carries (seq INTEGER PRIMARY KEY, arrays BLOB NOT NULL);
"""
ACCOUNT_KEY = "account"
EPOCH_KEY = "order_epoch"
LEGACY_KEY = "legacy_order_ids"  # "1": ids without an epoch (previous release) are ours
VERSION_KEY = "schema_version"


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def stored_version(conn: sqlite3.Connection) -> int | None:
    """The version the database was last migrated to; None for a new database."""
    found = _meta(conn, VERSION_KEY)
    return None if found is None else int(found)


def check_readable(conn: sqlite3.Connection) -> None:
    """Refuse a version this build cannot read (newer, or older than READABLE_FROM)."""
    found = _meta(conn, VERSION_KEY)
    if found is not None and not (found.isdigit()
                                  and READABLE_FROM <= int(found) <= SCHEMA_VERSION):
        raise UnusableStateError(
            f"schema version {found}, this build reads {READABLE_FROM} to {SCHEMA_VERSION}; "
            "use the regime-trader version that wrote it"
        )


# -- migrations ----------------------------------------------------------------------------

Migration = Callable[[sqlite3.Connection, str | None], None]


def _add_identity(conn: sqlite3.Connection, account: str | None) -> None:
    """2: the owning account and the order epoch. Ids an older database made have no
    epoch: it is marked legacy when it made any, so they still count as its own."""
    insert = "INSERT OR IGNORE INTO meta VALUES (?, ?)"
    if account is not None:
        conn.execute(insert, (ACCOUNT_KEY, account))
    if _meta(conn, EPOCH_KEY) is None:
        made_ids = conn.execute("SELECT 1 FROM intents LIMIT 1").fetchone() is not None
        conn.execute(insert, (LEGACY_KEY, "1" if made_ids else "0"))
        conn.execute(insert, (EPOCH_KEY, new_epoch()))


def _add_history(conn: sqlite3.Connection, account: str | None) -> None:
    """3: the account's and its instruments' history, kept past the checkpoints' pruning
    (service.state.history). A database of version 2 starts its history empty."""
    for statement in filter(str.strip, HISTORY_SCHEMA.split(";")):
        conn.execute(statement)  # not executescript: it would COMMIT the migration


def _add_returns(conn: sqlite3.Connection, account: str | None) -> None:
    """4: returns stored once. Checkpoints of version 3 keep their windows in their blob
    (decode_model_state reads both forms); the first checkpoint after the migration writes
    every window into the new tables."""
    for statement in filter(str.strip, RETURNS_SCHEMA.split(";")):
        conn.execute(statement)


def _returns_in_write_order(conn: sqlite3.Connection, account: str | None) -> None:
    """5: returns keyed by the update that wrote them; rows of version 4 count as written
    before any update (seq 0): they are read and pruned by symbol and idx as before."""
    for statement in filter(str.strip, RETURNS_IN_WRITE_ORDER.split(";")):
        conn.execute(statement)


def _checkpoints_as_columns(conn: sqlite3.Connection, account: str | None) -> None:
    """6: no table changes; a checkpoint's book holds its instruments as columns
    (service.state.book_columns) and its blob a CRC-32 of each window where it held a
    SHA-256. Checkpoints of before keep their form, and this build decodes both; the
    version is raised so that a build of before refuses a database it could not resume."""


def _returns_packed(conn: sqlite3.Connection, account: str | None) -> None:
    """7: the returns and windows tables hold one row per update, its returns or windows
    packed as columns (service.state.returns_packing); every row of version 6 is packed,
    so each retained checkpoint reads the same window back."""
    pack_tables(conn)


def _decisions_packed(conn: sqlite3.Connection, account: str | None) -> None:
    """8: the decisions and instrument_history tables hold one row per update, its
    instruments packed as columns (service.state.decision_columns); every row of version 7
    is packed, so every reader reads the same back."""
    decision_columns.pack_tables(conn)


def _add_carries(conn: sqlite3.Connection, account: str | None) -> None:
    """9: the carries table. Checkpoints of before keep their carries in their blob
    (decode_model_state reads both forms)."""
    conn.execute(CARRIES_SCHEMA)


# Keyed by the version each one brings the database to; version 1 is SCHEMA itself.
MIGRATIONS: dict[int, Migration] = {2: _add_identity, 3: _add_history, 4: _add_returns,
                                    5: _returns_in_write_order, 6: _checkpoints_as_columns,
                                    7: _returns_packed, 8: _decisions_packed, 9: _add_carries}


def decisions_packed(conn: sqlite3.Connection) -> bool:
    """Whether the database's decisions and instrument_history are packed (version 8 on);
    for a read-only reader, which reads whichever version it finds."""
    return (stored_version(conn) or 1) >= PACKED_DECISIONS


def migrate(conn: sqlite3.Connection, path: Path, account: str | None) -> None:
    """Bring the database to SCHEMA_VERSION: one transaction, then into the main file."""
    try:
        check_readable(conn)
    except UnusableStateError as error:
        raise UnusableStateError(f"{path}: {error}") from None
    found = stored_version(conn) or 1  # a new database has SCHEMA's tables: version 1
    if found == SCHEMA_VERSION:
        return
    with _immediate(conn):
        for version in range(found + 1, SCHEMA_VERSION + 1):
            MIGRATIONS[version](conn, account)
        conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                     (VERSION_KEY, str(SCHEMA_VERSION)))


# -- identity ------------------------------------------------------------------------------


def identity(conn: sqlite3.Connection, path: Path, account: str | None) -> OrderIds:
    """The database's owner and order epoch; the owner stamped first where missing (a
    database a read-only tool migrated). A database of another account is refused:
    trading on it would resume that account's state."""
    if account is not None and _meta(conn, ACCOUNT_KEY) is None:
        with _immediate(conn):
            conn.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (ACCOUNT_KEY, account))
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


@contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE ... COMMIT (rolled back on any exception), then a WAL checkpoint:
    what it wrote is in the main file at once."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(FULL)")
