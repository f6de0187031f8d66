"""The checkpoint book's instruments as columns, read back as the per-instrument entries
`status` and the resume read, whichever form a checkpoint was written in."""

from __future__ import annotations

import math

import pytest

from service.state import book_columns
from service.state.book_columns import InstrumentColumns

COLUMNS = InstrumentColumns(
    symbols=["GLD", "QQQ", "SPY"],
    last_bar_time=[None, "2026-01-05T09:30:00-05:00", "2026-01-05T09:30:00-05:00"],
    last_close=[math.nan, 350.5, 401.25],
    regime=[book_columns.NO_REGIME, 0, 1],
    retiring=[False, True, False],
    invested=[book_columns.NO_DECISION, 0, 1],
    target_weight=[0.0, 0.0, 0.25],
    target_qty=[0.0, 0.0, 12.0],
)


def test_columns_read_back_as_the_entries_of_before() -> None:
    book = {book_columns.COLUMNS_KEY: book_columns.encode(COLUMNS)}
    assert book_columns.entries(book) == {
        "GLD": {"last_bar_time": None, "last_close": None, "regime": None,
                "retiring": False, "decision": None},
        "QQQ": {"last_bar_time": "2026-01-05T09:30:00-05:00", "last_close": 350.5,
                "regime": 0, "retiring": True,
                "decision": {"invested": False, "target_weight": 0.0, "target_qty": 0.0}},
        "SPY": {"last_bar_time": "2026-01-05T09:30:00-05:00", "last_close": 401.25,
                "regime": 1, "retiring": False,
                "decision": {"invested": True, "target_weight": 0.25, "target_qty": 12.0}},
    }


def test_a_book_of_before_is_read_as_it_is() -> None:
    entries = {"SPY": {"last_bar_time": None, "last_close": 1.5, "regime": 0,
                       "retiring": False, "decision": None}}
    assert book_columns.entries({"cursor": 0, "instruments": entries}) == entries
    assert book_columns.entries({"cursor": 0}) == {}


def test_a_column_that_does_not_match_the_symbols_is_refused() -> None:
    book = {book_columns.COLUMNS_KEY: book_columns.encode(COLUMNS)}
    book[book_columns.COLUMNS_KEY]["symbols"] = ["GLD", "QQQ"]
    with pytest.raises(ValueError, match="3 values of a column where 2 instruments"):
        book_columns.entries(book)


def test_the_symbols_are_one_string_and_a_shared_time_is_written_once() -> None:
    """Each warm update's book: every instrument's last bar the same. Written once (with
    the symbols as one string: 8 of a 27 KB book at 268 instruments), read back per
    instrument as before."""
    time = "2026-01-05T09:30:00-05:00"
    shared = InstrumentColumns(**{**COLUMNS.__dict__, "last_bar_time": [time] * 3})
    written = book_columns.encode(shared)
    assert written["symbols"] == "GLD QQQ SPY" and written["last_bar_time"] == time
    entries = book_columns.entries({book_columns.COLUMNS_KEY: written})
    assert [e["last_bar_time"] for e in entries.values()] == [time] * 3
    assert list(entries) == ["GLD", "QQQ", "SPY"]
    assert book_columns.entries({book_columns.COLUMNS_KEY: book_columns.encode(
        InstrumentColumns([], [], [], [], [], [], [], []))}) == {}
