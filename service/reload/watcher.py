"""Watch the instruments file's folder (never the file: an atomic save replaces its inode
and a watch on it goes silent) and report each settled change of that one name."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import structlog
from watchfiles import Change, watch

from service.settings import ReloadSettings

log = structlog.get_logger("service.reload")
# An atomic save shows as `added` (the rename); in-place writes as `modified`. A deletion
# alone is ignored: the recreation that follows is what counts.
ACCEPTED = (Change.added, Change.modified)


class InstrumentsWatcher:
    """A thread that calls `on_change()` (which must only record) after each settled burst
    of changes to `path`."""

    def __init__(self, path: Path, settings: ReloadSettings, on_change: Callable[[], None]) -> None:
        self.path = path
        self.settings = settings
        self.on_change = on_change
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="instruments-watcher", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _accept(self, change: Change, path: str) -> bool:
        return change in ACCEPTED and Path(path).name == self.path.name

    def _run(self) -> None:
        try:
            for _ in watch(
                self.path.parent,
                watch_filter=self._accept,
                recursive=False,
                step=self.settings.quiet_ms,
                debounce=self.settings.debounce_ms,
                stop_event=self._stop,
                force_polling=self.settings.force_polling or None,
                raise_interrupt=False,
            ):
                self.on_change()
        except OSError as error:
            # The folder went away or cannot be watched: the periodic hash check and
            # SIGHUP still reload, so say so and carry on without the watcher.
            log.error("reload.watcher_failed", path=str(self.path.parent), reason=str(error))
