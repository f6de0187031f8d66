"""The WAL's pages copied into the database file after a bar's update, off its path.

SQLite copies the WAL back into the database file (a WAL checkpoint) by itself once the
WAL holds 1,000 pages, inside the COMMIT that crosses that size: at 268 instruments an
update writes about 60 pages, so every 17th update's checkpoint stage took 9 to 10 ms
instead of 2.5 to 3 on a 2-core VM (docs/benchmarks.md, thirty-seventh session). And until
then each COMMIT appends, growing the file, which its sync pays for (a journalled
metadata change): 1.0 to 1.2 ms against 0.65 to 0.8 for one that overwrites.

So the worker copies the WAL back after each bar's update, outside it: the next update's
COMMIT then starts the WAL afresh, over the pages the last one wrote, and the size at
which SQLite would copy inside a COMMIT is never reached. The copy is PASSIVE: it never
waits for a reader (`status`, the web page), and a reader on an older snapshot leaves
what it still needs in the WAL for the next copy, or for SQLite's own at 1,000 pages.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True)
class Backfill:
    """What one copy did: the WAL's frames, and how many of them are in the file now."""

    frames: int
    copied: int

    @property
    def complete(self) -> bool:
        return self.copied == self.frames


def backfill(conn: sqlite3.Connection) -> Backfill:
    """A passive WAL checkpoint on `conn` (outside any transaction). Raises what SQLite
    raises (sqlite3.Error): the caller decides whether a failed copy matters."""
    busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    del busy  # PASSIVE never waits, so it is never busy: a reader only leaves frames
    return Backfill(max(frames, 0), max(copied, 0))  # -1 each: not in WAL mode
