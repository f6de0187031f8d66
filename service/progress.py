"""A one-line progress display for long commands at a terminal (fit, bench, back-fill).

Commands ask for it only when stderr is a TTY, so pipes, logs and CI stay quiet. The line
is redrawn in place at most every 0.2 s, and ends with a newline when the work is done.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

REDRAW_S = 0.2


def show_progress(label: str, out: TextIO | None = None) -> Callable[[int, int], None]:
    stream = out or sys.stderr
    started, last = time.monotonic(), [0.0]

    def update(done: int, total: int) -> None:
        now = time.monotonic()
        finished = done >= total
        if not finished and now - last[0] < REDRAW_S:
            return
        last[0] = now
        share = done / total if total else 1.0
        stream.write(f"\r{label}: {done}/{total} ({100 * share:.0f} %, {now - started:.1f} s)")
        if finished:
            stream.write("\n")
        stream.flush()

    return update
