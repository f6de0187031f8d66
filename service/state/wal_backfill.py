"""The WAL's pages copied into the database file after a bar's update, off its path.

SQLite copies the WAL back into the database file (a WAL checkpoint) by itself once the
WAL holds 1,000 pages, inside the COMMIT that crosses that size: at 268 instruments an
update writes about 63 (260 KB), so about every 17th update's checkpoint stage took 9 to
10 ms instead of 2.5 to 3 on a 2-core VM, its COMMIT 8.4 ms. And until then each COMMIT
appends, growing the file, which its sync pays for: 1.1 to 1.2 ms against 0.7 to 0.8 for
one that overwrites (docs/bench-results/commit_times.py; docs/benchmarks.md, thirty-seventh
session).

So the worker copies the WAL back after each bar's update, outside it, and starts the WAL
afresh there too, with a one-page write (a count of these restarts, in `meta`): the first
write into a WAL just copied back costs ~0.17 ms more than the next ones on that VM
(measured, not taken apart: the WAL started afresh over the pages its copy just synced),
and would otherwise fall on the next bar's first write, its reconcile stage. It must
change the page: SQLite writes nothing for an UPDATE that leaves a row as it was. The
bar's writes then go over the pages the last update wrote, and the size at which SQLite
would copy inside a COMMIT is never reached.
The copy is PASSIVE: it never waits for a reader (`status`, the web page), and a reader
on an older snapshot leaves what it still needs in the WAL for the next copy, or for
SQLite's own at 1,000 pages (and the WAL is then not started afresh).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from service.state.transaction import Transaction


@dataclass(frozen=True)
class Backfill:
    """What one copy did: the WAL's frames, and how many of them are in the file now."""

    frames: int
    copied: int

    @property
    def complete(self) -> bool:
        return self.copied == self.frames


# One page, the first frame of a WAL started afresh; it must change the row (above).
RESTART = ("INSERT INTO meta VALUES ('wal_restarts', '1') ON CONFLICT (key) "
           "DO UPDATE SET value = CAST(value AS INTEGER) + 1")


def backfill(conn: sqlite3.Connection) -> Backfill:
    """A passive WAL checkpoint on `conn` (outside any transaction), and the WAL started
    afresh where it copied every frame. Raises what SQLite raises (sqlite3.Error): the
    caller decides whether a failed copy matters."""
    busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    del busy  # PASSIVE never waits, so it is never busy: a reader only leaves frames
    done = Backfill(max(frames, 0), max(copied, 0))  # -1 each: not in WAL mode
    if done.frames and done.complete:
        with Transaction(conn, durable=False):  # lost to a power loss: only a count
            conn.execute(RESTART)
    return done
