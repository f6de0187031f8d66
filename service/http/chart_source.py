"""`/api/charts?account=A`: the charts' data object (service/web/chart_data.py) of one
account, read from its state database.

Reading an account's whole history costs a query per table, so the object is kept until
the account's last committed seq moves: every browser polling the page every two seconds
costs one read per update, not one per poll. That seq is read from the database itself
(one indexed query), not taken from the worker's report: the page learns the seq from
`/api/status`, which reads the database, and a worker's report can arrive after it, so a
cache keyed on the report handed the page the previous update's charts for a whole bar.
A database with no update yet gives a `pending` object (200, so the page's console stays
clean while the daemon starts); one that cannot be read gives `unavailable` with the
reason.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from service.reports.account_history import NoHistoryError
from service.state.reader import last_seq
from service.state.status_reads import READ_ERRORS
from service.web.chart_data import account_chart_data


class ChartSource:
    def __init__(self, database_of: Callable[[str], Path]) -> None:
        self.database_of = database_of
        self._cache: dict[str, tuple[int, dict[str, Any]]] = {}
        self._lock = threading.Lock()  # one read per account and seq, whatever the polls

    def data(self, account: str) -> dict[str, Any]:
        """The object for `account` as of its last committed update (the key of the cache):
        never older than what `/api/status` said before the request."""
        with self._lock:
            try:
                seq = last_seq(self.database_of(account))
            except READ_ERRORS:
                seq = -1  # unreadable now: read afresh, and say why (below)
            cached = self._cache.get(account)
            if cached is not None and cached[0] == seq:
                return cached[1]
            data = self._read(account)
            if data.get("kind") == "account" and seq >= 0:
                self._cache[account] = (seq, data)
            return data

    def _read(self, account: str) -> dict[str, Any]:
        try:
            return account_chart_data(account, self.database_of(account), datetime.now(UTC))
        except NoHistoryError as error:
            return {"kind": "pending", "account": account, "reason": str(error)}
        except READ_ERRORS as error:  # said on the page; the daemon's own log has the cause
            return {"kind": "unavailable", "account": account, "reason": str(error)}
