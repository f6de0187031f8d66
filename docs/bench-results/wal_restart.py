"""The first write into a WAL just copied back, in SQLite alone (thirty-seventh session,
issue 14 item 4): `python docs/bench-results/wal_restart.py [DIR]` (default /tmp). A
database in WAL mode, synchronous=FULL, a 200 KB synced transaction per round (an update's
checkpoint), then a PASSIVE WAL checkpoint, then small synchronous=NORMAL transactions
(50 rows updated: an update's record of its orders' outcomes), each COMMIT timed. Prints
the median ms of each position after the copy, over 25 rounds, for: nothing first; a
read first; a write that changes nothing first; a one-row write that changes it first
(what service/state/wal_backfill.py does after the bar)."""

import os
import sqlite3
import sys
import tempfile
import time

import numpy as np

ROUNDS, SKIP = 30, 5


def main() -> None:
    folder = tempfile.mkdtemp(dir=sys.argv[1] if len(sys.argv) > 1 else "/tmp")
    conn = sqlite3.connect(os.path.join(folder, "x.sqlite"), isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("CREATE TABLE big (seq INTEGER PRIMARY KEY, v BLOB)")
    conn.execute("CREATE TABLE small (k INTEGER PRIMARY KEY, v INTEGER)")
    conn.execute("CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT)")
    conn.execute("INSERT INTO meta VALUES ('n', '0')")
    conn.executemany("INSERT INTO small VALUES (?, ?)", [(i, i) for i in range(2000)])
    blob = os.urandom(200_000)
    seq = [0]


    def normal_commit(write) -> float:  # type: ignore[no-untyped-def]
        """`write()` in a synchronous=NORMAL transaction; its COMMIT's ms."""
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("BEGIN IMMEDIATE")
        write()
        start = time.perf_counter()
        conn.execute("COMMIT")
        elapsed = time.perf_counter() - start
        conn.execute("PRAGMA synchronous=FULL")
        return 1e3 * elapsed

    def outcomes() -> float:
        rows = [(i * 37 % 2000,) for i in range(50)]
        return normal_commit(lambda: conn.executemany(
            "UPDATE small SET v = v + 1 WHERE k = ?", rows))

    firsts = {
        "nothing": lambda: 0.0,
        "a read": lambda: 0.0 * conn.execute("SELECT COUNT(*) FROM small").fetchone()[0],
        "a write that changes nothing": lambda: normal_commit(
            lambda: conn.execute("UPDATE meta SET v = v")),
        "a write that changes a row": lambda: normal_commit(
            lambda: conn.execute("UPDATE meta SET v = CAST(v AS INTEGER) + 1")),
    }
    for name, first in firsts.items():
        rows = []
        for _ in range(ROUNDS):
            seq[0] += 1
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO big VALUES (?, ?)", (seq[0], blob))
            conn.execute("COMMIT")
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
            rows.append([first(), outcomes(), outcomes()])
        first_ms, second_ms, third_ms = np.median(np.array(rows[SKIP:]), axis=0)
        print(f"{name:30s} first {first_ms:6.3f}  then outcomes {second_ms:6.3f}, "
              f"{third_ms:6.3f} ms")


if __name__ == "__main__":
    main()
