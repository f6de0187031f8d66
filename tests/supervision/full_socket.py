"""A datagram socket whose queue is full, as systemd's is when its manager stalls."""

from __future__ import annotations

import contextlib
import socket


def fill(path: str) -> list[socket.socket]:
    """Fill the queue of the datagram socket at `path` until a new sender would block."""
    senders: list[socket.socket] = []
    while True:
        sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sender.connect(path)
        sender.setblocking(False)
        senders.append(sender)
        sent = 0
        with contextlib.suppress(BlockingIOError):  # this sender can send no more
            while True:
                sender.send(b"x")
                sent += 1
        if sent == 0:  # even a fresh sender is refused: the receiver's queue is full
            return senders
