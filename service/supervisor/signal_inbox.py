"""Where signal handlers record what arrived, for the supervisor's loop to act on.

A handler only queues the signal and writes a wake-up byte to a socket the loop waits on;
the loop drains both. No real work ever runs inside a handler.
"""

from __future__ import annotations

import contextlib
import queue
import signal
import socket
from collections.abc import Iterable, Iterator
from types import FrameType


class SignalInbox:
    def __init__(self) -> None:
        self.signals: queue.SimpleQueue[int] = queue.SimpleQueue()
        self.waitable, self._wake_w = socket.socketpair()
        self._wake_w.setblocking(False)  # a signal handler must never block on it

    def install(self, signums: Iterable[signal.Signals]) -> None:
        def record(signum: int, frame: FrameType | None) -> None:
            self.signals.put(signum)  # only record; the loop acts
            self.wake()

        for signum in signums:
            signal.signal(signum, record)

    def wake(self) -> None:
        # BlockingIOError: the socket is full of wake-ups already; one is enough.
        with contextlib.suppress(BlockingIOError):
            self._wake_w.send(b"\0")

    def drain_wakeups(self) -> None:
        self.waitable.setblocking(False)
        try:
            while self.waitable.recv(64):
                pass
        except BlockingIOError:
            pass  # nothing (more) to drain

    def take_signals(self) -> Iterator[signal.Signals]:
        """The recorded signals, oldest first, until none is left."""
        while not self.signals.empty():
            yield signal.Signals(self.signals.get())
