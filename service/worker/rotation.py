"""Which instruments an update refreshes: all of them, or the next slice round-robin."""

from __future__ import annotations

from service.types import Symbol


def next_batch(
    symbols: tuple[Symbol, ...], start: int, batch_size: int
) -> tuple[tuple[Symbol, ...], int]:
    """The batch for this update (from index `start`) and the start of the next. Every
    symbol comes round in turn; a batch size of 0 (or the whole list) takes everything
    every time."""
    count = len(symbols)
    if batch_size == 0 or batch_size >= count:
        return symbols, 0
    start %= count
    batch = tuple(symbols[(start + i) % count] for i in range(batch_size))
    return batch, (start + batch_size) % count
