"""The supervisor's observers of log events: the runtime status, the metrics, the alerts.

Events come from the supervisor's own log (a listener on service/event_tap.py) and from
every worker's (forwarded over its control pipe). An observer's fault must not stop
supervision, so each one's error is logged to stderr and the others still run.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterable
from typing import Any, Protocol


class Observer(Protocol):
    def on_event(self, event: dict[str, Any]) -> None: ...


class EventHub:
    def __init__(self, observers: Iterable[Observer] = ()) -> None:
        self.observers = list(observers)

    def publish(self, event: dict[str, Any]) -> None:
        for observer in self.observers:
            try:
                observer.on_event(event)
            except Exception:  # an observer's bug: say so, never stop the supervisor
                # stderr, not the log: logging it would publish again, and could loop
                print(f"observer {type(observer).__name__} failed on {event.get('event')}:\n"
                      f"{traceback.format_exc()}", file=sys.stderr, flush=True)
