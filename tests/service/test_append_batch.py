"""Taking a batch of bars for many instruments at once leaves every instrument exactly as
taking its bars one instrument at a time (InstrumentState.append) does, bit for bit."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from service.market.bar_batch import batch_of
from service.model_state import SLIDE, InstrumentState, ModelState, append_batch
from service.types import Bar

WINDOW = 8
T = datetime(2026, 1, 5, 15, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


def bar(n: int, close: float) -> Bar:
    return Bar(T + n * MINUTE, close, close * 1.01, close * 0.99, close, 100.0)


def seen(symbol: str, returns: int, close: float | None, n: int = 0) -> InstrumentState:
    """An instrument whose last bar is bar n, holding `returns` returns."""
    state = InstrumentState(symbol, returns=np.linspace(-0.01, 0.01, returns))
    if close is not None:
        state.last_bar_time, state.last_close = T + n * MINUTE, close
    return state


def assert_same_as_one_by_one(
    instruments: dict[str, InstrumentState], bars: dict[str, list[Bar]]
) -> None:
    one_by_one = copy.deepcopy(instruments)
    expected = sum(one_by_one[s].append(got, WINDOW) for s, got in bars.items())
    assert append_batch(ModelState(instruments), batch_of(bars), WINDOW) == expected
    for symbol, want in one_by_one.items():
        got = instruments[symbol]
        assert got.returns.tobytes() == want.returns.tobytes(), symbol
        assert (got.last_bar_time, got.last_close, got.unsaved) == (
            want.last_bar_time, want.last_close, want.unsaved), symbol


def test_every_case_of_a_fetch_is_taken_as_append_takes_it() -> None:
    instruments = {
        "FULL": seen("FULL", WINDOW, 100.0),  # a warm update's instrument
        "WARMING": seen("WARMING", 3, 50.0),  # not a full window yet
        "FIRST": seen("FIRST", 0, None),  # its first bar: no return yet
        "HISTORY": seen("HISTORY", 0, None),  # a cold fetch: a window of history at once
        "SHORT": seen("SHORT", 0, None),  # a cold fetch with less than a window of it
        "SEVERAL": seen("SEVERAL", WINDOW, 20.0),  # back-filled after a gap
        "NONE": seen("NONE", WINDOW, 30.0),  # no new bar (market closed)
        "STALE": seen("STALE", WINDOW, 40.0, n=1),  # a bar it already has
        "MIXED": seen("MIXED", WINDOW, 60.0, n=1),  # one old bar, one new
    }
    bars = {
        "FULL": [bar(1, 101.0)], "WARMING": [bar(1, 49.5)], "FIRST": [bar(1, 7.0)],
        "HISTORY": [bar(n, 30.0 + 0.37 * n * (-1) ** n) for n in range(1, WINDOW + 5)],
        "SHORT": [bar(1, 12.5), bar(2, 12.75), bar(3, 12.0)],
        "SEVERAL": [bar(1, 21.0), bar(2, 19.0), bar(3, 22.5)], "NONE": [],
        "STALE": [bar(1, 41.0)], "MIXED": [bar(1, 61.0), bar(2, 62.0)],
    }
    assert_same_as_one_by_one(instruments, bars)


def test_hundreds_of_random_closes_give_the_same_returns_bit_for_bit() -> None:
    rng = np.random.default_rng(5)
    before = np.exp(rng.normal(3.0, 2.0, 500)).tolist()
    after = (np.asarray(before) * np.exp(rng.normal(0.0, 0.02, 500))).tolist()
    instruments = {f"S{i}": seen(f"S{i}", WINDOW, close) for i, close in enumerate(before)}
    bars = {f"S{i}": [bar(1, close)] for i, close in enumerate(after)}
    assert_same_as_one_by_one(instruments, bars)


def test_update_after_update_the_windows_match_and_none_handed_out_ever_changes() -> None:
    """Warm updates slide the book's table; a different set of instruments, a window
    replaced meanwhile, or a table out of room starts another. Throughout, every
    instrument is as one-by-one appending leaves it, and a window once handed out keeps
    its values (it is read-only)."""
    rng = np.random.default_rng(9)
    symbols = [f"S{i}" for i in range(12)]
    instruments = {s: seen(s, WINDOW, 100.0) for s in symbols}
    reference, book = copy.deepcopy(instruments), ModelState(instruments)
    handed_out = []
    for n in range(1, SLIDE + 20):  # past the first table's room
        asked = symbols[1:] if n == 5 else symbols  # another set of instruments
        if n == 9:  # a window replaced between updates (as a restored checkpoint does)
            for state in (instruments["S3"], reference["S3"]):
                state.returns = np.linspace(0.0, 0.02, WINDOW)
        bars = {s: [bar(n, float(np.exp(rng.normal(4.6, 0.3))))] for s in asked}
        assert append_batch(book, batch_of(bars), WINDOW) == len(asked)
        for symbol in asked:
            reference[symbol].append(bars[symbol], WINDOW)
        for symbol, want in reference.items():
            got = instruments[symbol]
            assert got.returns.tobytes() == want.returns.tobytes(), (n, symbol)
            assert (got.last_close, got.unsaved) == (want.last_close, want.unsaved)
        handed_out.append((instruments["S0"].returns, instruments["S0"].returns.tobytes()))
    assert all(window.tobytes() == then for window, then in handed_out)
    with pytest.raises(ValueError, match="read-only"):
        instruments["S0"].returns[0] = 1.0
