"""`regime-trader bench stages` with the state database's WAL never synced (issue 14, item
4; thirty-sixth session): `python docs/bench-results/stages_nosync.py bench stages ARGS`,
PYTHONPATH the tree. Every connection runs synchronous=OFF, so the checkpoint stage is
its encoding and SQL alone; against the same bench as shipped it says how much of the
stage is the COMMIT's fsync on that host's disk. A measurement only: the daemon syncs."""

import sys

from service.cli import main
from service.state import store, transaction

_connect, _enter = store.connect, transaction.Transaction.__enter__


def connect(path, read_only=False):  # type: ignore[no-untyped-def]
    conn = _connect(path, read_only)
    if not read_only:
        conn.execute("PRAGMA synchronous = OFF")
    return conn


def enter(self):  # type: ignore[no-untyped-def]
    self._durable = True  # no switch back to FULL after an outcome's transaction
    return _enter(self)


store.connect = connect
transaction.Transaction.__enter__ = enter
sys.exit(main())
