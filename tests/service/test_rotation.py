"""Rotation: the whole list, or slices round-robin so that no symbol is starved."""

from __future__ import annotations

from collections import Counter

from service.worker.rotation import next_batch

SYMBOLS = ("A", "B", "C", "D", "E")


def test_batch_size_zero_takes_everything_every_time() -> None:
    assert next_batch(SYMBOLS, 3, 0) == (SYMBOLS, 0)
    assert next_batch(SYMBOLS, 0, 9) == (SYMBOLS, 0)


def test_slices_go_round_robin_and_wrap() -> None:
    assert next_batch(SYMBOLS, 0, 2) == (("A", "B"), 2)
    assert next_batch(SYMBOLS, 4, 2) == (("E", "A"), 1)


def test_every_symbol_is_updated_equally_often() -> None:
    seen: Counter[str] = Counter()
    cursor = 0
    for _ in range(10):
        batch, cursor = next_batch(SYMBOLS, cursor, 2)
        seen.update(batch)
    assert set(seen.values()) == {4}


def test_a_shrunken_list_keeps_the_cursor_in_range() -> None:
    batch, _ = next_batch(("A", "B"), 7, 1)
    assert batch == ("B",)
