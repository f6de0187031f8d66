"""Listeners on this process's log events: how the supervisor learns what happened.

Every event a process logs passes the `tap` processor (after redaction, before rendering),
which hands a copy to each listener. In a worker the listener forwards the event to the
supervisor over its control pipe; in the supervisor its own events and those forwarded
reach the observers that keep the metrics, the runtime status and the alerts. One source
of truth: what the log says happened is what the metrics count.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

Listener = Callable[[dict[str, Any]], None]
_listeners: list[Listener] = []


def listen(listener: Listener) -> None:
    _listeners.append(listener)


def unlisten(listener: Listener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def tap(logger: Any, method: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
    """A structlog processor: each listener gets its own shallow copy of the event."""
    for listener in tuple(_listeners):
        listener(dict(event))
    return event
