"""Persistent device buffers, one per role, grown to power-of-two capacities.

A call asks for a role and a byte count; the pool hands back the role's buffer, replacing
it (and destroying the old one) only when it is too small. `generation` changes with every
replacement, so bind groups built over the pool are rebuilt only then. In steady state a
call creates nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

MIN_CAPACITY = 256


def capacity(nbytes: int) -> int:
    """The power of two >= nbytes (and >= MIN_CAPACITY)."""
    if nbytes < 0:
        raise ValueError(f"a buffer cannot hold {nbytes} bytes")
    return max(MIN_CAPACITY, 1 << max(nbytes - 1, 0).bit_length())


class BufferPool:
    def __init__(self, device: Any) -> None:
        self._device = device
        self._buffers: dict[str, Any] = {}
        self.generation = 0
        self.created = 0  # buffers ever created: flat in steady state

    def take(
        self, sizes: dict[str, int], usage: dict[str, int], limit: int, unbounded: str
    ) -> dict[str, Any]:
        """Every role's buffer; the `unbounded` one (a read-back: mapped, never bound) is
        not held to the binding limit."""
        return {
            role: self.get(role, n, usage[role], None if role == unbounded else limit)
            for role, n in sizes.items()
        }

    def get(self, role: str, nbytes: int, usage: int, limit: int | None = None) -> Any:
        """The role's buffer, at least nbytes; capacities stop at `limit` (a binding's max)."""
        buffer = self._buffers.get(role)
        if buffer is not None and buffer.size >= nbytes and buffer.usage == usage:
            return buffer
        if buffer is not None:
            buffer.destroy()
        size = capacity(nbytes)
        if limit is not None and nbytes <= limit < size:
            size = limit
        buffer = self._device.create_buffer(label=role, size=size, usage=usage)
        self._buffers[role] = buffer
        self.generation += 1
        self.created += 1
        return buffer

    def nbytes(self) -> int:
        return sum(int(b.size) for b in self._buffers.values())

    def size(self, role: str) -> int:
        """Bytes of the role's buffer (0: none held)."""
        buffer = self._buffers.get(role)
        return 0 if buffer is None else int(buffer.size)

    def release(self) -> None:
        for buffer in self._buffers.values():
            buffer.destroy()
        self._buffers.clear()
        self.generation += 1


def cached_bind_group(
    cached: tuple[int, Any] | None,
    generation: int,
    device: Any,
    layout: Any,
    buffers: dict[str, Any],
    roles: Sequence[str],
) -> tuple[int, Any]:
    """The bind group over `buffers` in `roles` order, rebuilt only when the pool has
    replaced a buffer since `cached` was made (its generation moved on)."""
    if cached is not None and cached[0] == generation:
        return cached
    group = device.create_bind_group(
        layout=layout,
        entries=[
            {"binding": i, "resource": {"buffer": buffers[r], "offset": 0}}
            for i, r in enumerate(roles)
        ],
    )
    return generation, group


def read_back(readback: Any, nbytes: int) -> npt.NDArray[np.uint8]:
    """The first `nbytes` of a mapped read-back buffer, copied out, the buffer unmapped
    whatever happens (a buffer left mapped cannot be used by the next submission)."""
    import wgpu  # noqa: PLC0415 - the pool itself is importable without a device

    readback.map_sync(wgpu.MapMode.READ, 0, nbytes)
    try:
        return np.frombuffer(readback.read_mapped(0, nbytes), dtype=np.uint8).copy()
    finally:
        readback.unmap()
