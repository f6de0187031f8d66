"""Opening a SQLite file by a URI that any legal path survives.

A raw `file:{path}` URI lets '#' start a fragment, '?' a query and '%' an escape, so
differently named files can end up at the same database. The path is percent-encoded
(from its bytes, so non-UTF-8 names survive too) and made absolute first.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote_from_bytes


def sqlite_uri(path: Path, read_only: bool = False) -> str:
    encoded = quote_from_bytes(os.fsencode(path.absolute()), safe="/")
    return f"file:{encoded}?mode={'ro' if read_only else 'rwc'}"


def open_sqlite(
    path: Path, read_only: bool = False, check_same_thread: bool = True
) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) to exactly `path`."""
    return sqlite3.connect(sqlite_uri(path, read_only), uri=True, isolation_level=None,
                           check_same_thread=check_same_thread)
