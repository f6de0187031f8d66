"""Worker output reaches the log whole.

Each worker writes its stdout and stderr into pipes of its own; the supervisor reads them
and writes whole lines to its stdout, one write per line. A worker's log lines pass
through as they are (they already carry `account` and `pid`); anything on its stderr (a
Python traceback, a native abort, faulthandler's stack dump) becomes a `worker.stderr`
event with the account, so nothing a worker says is lost or interleaved mid-line, even on
FreeBSD where pipes are atomic only to 512 bytes. Under journald the relay, not the
worker, leads each line with its priority (service/log_priority.py says why).
"""

from __future__ import annotations

import os
import sys
from collections import deque
from collections.abc import Callable
from typing import BinaryIO

from service.log_priority import relayed_line, writes_to_journal

MAX_LINE = 1 << 20  # a line longer than this is cut, so a runaway writer cannot eat memory
TAIL_LINES = 20  # a worker's last stderr lines kept for its exit event
TAIL_WIDTH = 500  # each cut to this many characters: a bounded tail, whatever it wrote


class LineReader:
    """Non-blocking reads from one pipe, handing out complete lines."""

    def __init__(self, fd: int, on_line: Callable[[bytes], None]) -> None:
        self.fd = fd
        os.set_blocking(fd, False)
        self._on_line = on_line
        self._partial = b""
        self.closed = False

    def fileno(self) -> int:
        return self.fd

    def pump(self) -> None:
        """Read what is there; at end of file flush the last partial line and close."""
        while not self.closed:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            if not chunk:
                self.close()
                return
            self._split(chunk)

    def _split(self, chunk: bytes) -> None:
        *lines, self._partial = (self._partial + chunk).split(b"\n")
        for line in lines:
            self._on_line(line)
        if len(self._partial) > MAX_LINE:
            self._on_line(self._partial)
            self._partial = b""

    def close(self) -> None:
        if self._partial:
            self._on_line(self._partial)
            self._partial = b""
        if not self.closed:
            self.closed = True
            os.close(self.fd)


def write_line(line: bytes, out: BinaryIO | None = None) -> None:
    """One write per line, so lines from several workers never mix."""
    stream = out or sys.stdout.buffer
    # Asked per line (an fstat): a worker's pipe is never the journal, so the worker wrote
    # plain JSON and only here, where the journal is stdout, can its priority be added.
    if writes_to_journal(stream):
        line = relayed_line(line)
    stream.write(line + b"\n")
    stream.flush()


class StderrTail:
    """The last `lines` lines a worker wrote to stderr, each cut to `width` characters,
    so its exit can say what it last said (a traceback, a native abort)."""

    def __init__(self, lines: int = TAIL_LINES, width: int = TAIL_WIDTH) -> None:
        self._lines: deque[str] = deque(maxlen=lines)
        self._width = width

    def add(self, line: str) -> None:
        cut = line if len(line) <= self._width else line[: self._width - 1] + "\u2026"
        self._lines.append(cut)

    def lines(self) -> list[str]:
        return list(self._lines)

    def clear(self) -> None:
        self._lines.clear()
