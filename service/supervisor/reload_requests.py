"""The requests that lead to the supervisor's one reload path, and what it logs about
the file it read.

SIGHUP, the watcher and the periodic hash check each add a source; the loop takes them as
one reload, labelled by every source that asked ("poll+watch"). A rejected file is logged
once per content, unless SIGHUP asked: an explicit reload is always answered.
"""

from __future__ import annotations

import queue
import time

import structlog

from service.reload.reloader import InstrumentsReloader, ReloadOutcome

log = structlog.get_logger("service.supervisor")


class ReloadRequests:
    def __init__(self, reloader: InstrumentsReloader) -> None:
        self.reloader = reloader
        self.sources: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._next_poll = time.monotonic() + reloader.config.settings.reload.poll_s

    def put(self, source: str) -> None:
        """Thread-safe: the watcher's thread calls it."""
        self.sources.put(source)

    def take(self, now: float) -> str | None:
        """Every source that asked since the last call, the poll included when it is due
        and the file has changed and settled; None when nothing asked."""
        requested = set()
        while not self.sources.empty():
            requested.add(self.sources.get())
        if now >= self._next_poll:
            self._next_poll = now + self.reloader.config.settings.reload.poll_s
            if self.reloader.changed_and_settled():
                requested.add("poll")
        return "+".join(sorted(requested)) if requested else None


def announce(outcome: ReloadOutcome, source: str, path: str) -> bool:
    """Log a file that changes nothing (rejected or unchanged); True when it is to be
    applied."""
    if outcome.status == "rejected" and outcome.repeat and "sighup" not in source:
        # Said once per content; an explicit reload (SIGHUP) is always answered.
        log.debug("config.still_rejected", source=source, file=path)
    elif outcome.status == "rejected":
        log.error("config.rejected", source=source, file=path, errors=outcome.errors)
    elif outcome.status == "unchanged":
        log.info("config.unchanged", source=source, file=path)
    else:
        return True
    return False
