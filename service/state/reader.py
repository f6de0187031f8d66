"""Read-only views of a state database, for the supervisor and the chaos proof
(`status` has its own: service.state.status_reads)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from service.state.storage_faults import is_temporary, unavailable
from service.state.store import StateStore, UnusableStateError, connect


def last_seq(path: Path) -> int:
    """The newest checkpoint's sequence number; 0 for an account that has none yet."""
    if not path.exists():
        return 0
    try:
        conn = connect(path, read_only=True)
        try:
            row = conn.execute("SELECT MAX(seq) FROM checkpoints").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError as error:
        if is_temporary(error):  # unreadable for now (I/O error, permission): not damage
            raise unavailable(path, f"cannot read it ({error})") from None
        raise UnusableStateError(
            f"{path}: cannot read the state database ({error}); move it aside to start "
            "afresh, or restore it from a backup"
        ) from None
    return int(row[0] or 0)


def final_records(path: Path) -> tuple[dict[str, Any], str]:
    """What crash equivalence compares of an account's state database (model digests per
    checkpoint, the last seq, cash and equity, every intent), and its order epoch."""
    store = StateStore(path)
    try:
        latest = store.latest()
        if latest is None:
            raise UnusableStateError(f"{path}: no checkpoint")
        records = {
            "model_digests": store.model_digests(),
            "seq": latest.seq,
            "cash": latest.cash,
            "equity": latest.equity,
            "intents": store.intents(),
        }
        return records, store.ids.epoch
    finally:
        store.close()
