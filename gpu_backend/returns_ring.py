"""The returns window on the device, advanced one bar in place (a ring buffer).

At every bar an account's window moves on by one: the oldest bar leaves, a new one comes.
The device keeps the raw returns time-major, [T, instruments] float32, so one bar is one
contiguous write of `instruments` floats into the slot the oldest bar held; bar t of the
window lives in slot (head + t) % T. The scale (robust, per instrument) changes with
every window, so it is written whole (4 bytes an instrument), and the kernel divides.

Nothing is trusted: the ring advances only when the new window's first T - 1 bars equal
the last T - 1 of the window it holds (compared by value on the host), and only while the
device buffer is the one it wrote (the pool's generation); the same window again (an
update's extension blocks, which read their instruments from the account's ring) writes
nothing; anything else (another account's batch, an instrument added, a longer window, a
buffer the pool replaced) is a full upload. Either way the device holds the same floats:
tests/gpu_backend prove it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from regime_model.backend import ReturnsWindow
from regime_model.types import FloatArray


class Held(NamedTuple):
    generation: int  # the buffer pool's, when the ring was written
    returns: FloatArray  # [N, T] the window the device holds
    head: int  # the slot of the window's first bar


class ReturnsRing:
    def __init__(self) -> None:
        self._held: Held | None = None
        self.bars_written = 0  # bars uploaded so far (a full upload writes T per instrument)

    def write(
        self, queue: Any, ring: Any, scale: Any, window: ReturnsWindow, generation: int
    ) -> int:
        """Bring the device's ring and scale to `window`; returns the head slot."""
        returns = np.asarray(window.returns, dtype=np.float64)
        N, T = (int(n) for n in returns.shape)
        held = self._held
        if held is not None and self._holds(held, returns, generation):
            return held.head
        if held is not None and self._follows(held, returns, generation):
            queue.write_buffer(ring, 4 * N * held.head, returns[:, -1].astype(np.float32))
            head = (held.head + 1) % T
            self.bars_written += 1
        else:
            queue.write_buffer(ring, 0, np.ascontiguousarray(returns.T, dtype=np.float32))
            head = 0
            self.bars_written += T
        queue.write_buffer(scale, 0, np.asarray(window.scale, dtype=np.float32))
        self._held = Held(generation, returns.copy(), head)
        return head

    @staticmethod
    def _holds(held: Held, returns: FloatArray, generation: int) -> bool:
        """Whether the device holds `returns` already (the scale is theirs: written with them)."""
        return (
            held.generation == generation
            and held.returns.shape == returns.shape
            and bool(np.array_equal(held.returns, returns))
        )

    @staticmethod
    def _follows(held: Held, returns: FloatArray, generation: int) -> bool:
        """Whether `returns` is the held window moved on by exactly one bar."""
        return (
            held.generation == generation
            and held.returns.shape == returns.shape
            and bool(np.array_equal(held.returns[:, 1:], returns[:, :-1]))
        )
