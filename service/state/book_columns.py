"""The checkpoint book's instruments (schema version 6) and broker positions as columns,
and back.

Up to version 5 the book held one JSON object per instrument (`"instruments": {symbol:
{last_bar_time, last_close, regime, retiring, decision}}`). At 268 instruments writing it
cost about 2.5 ms of every update (a dict per instrument, then JSON's repr of ~800
floats). Now the book holds them as columns: the symbols and their last-bar times as JSON
lists, the numbers as little-endian arrays in base64 (`COLUMNS_KEY`). A number that may be
absent has a sentinel: NaN for a close, -1 for a regime, -1 for `invested` when there is
no decision (its weight and quantity are then 0 and ignored).

From schema version 9 the symbols are one string, separated by spaces (a symbol has
none: service.instruments.SYMBOL_RE), and a last-bar time every instrument shares (each
warm update's case) is written once instead of once per instrument: 8 of a 27 KB book
at 268 instruments, and 99 -> 68 us of its JSON encoding (docs/bench-results/book_forms.py).

`entries` reads every form back as the per-instrument objects of version 5, so a reader
(`status`, which loads no numpy, and the resume) sees one form. Pure Python: `array`, not
numpy.

The broker's positions at the update's snapshot, which only `status` reads, were an
object per symbol (`POSITIONS_KEY`: {symbol: {qty, avg_entry_price}}, 0.4 to 0.5 ms of an
update at 268 held symbols); since the eighteenth session's release they are columns
under POSITION_COLUMNS_KEY. `positions` reads either: a database keeps checkpoints of
both forms, so no migration rewrites them (and the schema version stays: a release
before reads the new form's checkpoints as having no positions, which `status` shows as
unknown, and the resume never reads them).
"""

from __future__ import annotations

import base64
import math
import sys
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

COLUMNS_KEY = "instrument_columns"
ENTRIES_KEY = "instruments"  # the per-instrument objects of versions 1 to 5
POSITION_COLUMNS_KEY = "broker_position_columns"  # {symbols, qty, avg_entry_price}
POSITIONS_KEY = "broker_positions"  # {symbol: {qty, avg_entry_price}}, written before
NO_REGIME = -1
NO_DECISION = -1


@dataclass(frozen=True)
class InstrumentColumns:
    """One value per instrument in each list, the instruments in `symbols`' order."""

    symbols: Sequence[str]
    last_bar_time: Sequence[str | None]  # isoformat
    last_close: Sequence[float]  # NaN: none yet
    regime: Sequence[int]  # NO_REGIME: none yet
    retiring: Sequence[bool]
    invested: Sequence[int]  # 0 or 1, NO_DECISION: no decision yet
    target_weight: Sequence[float]
    target_qty: Sequence[float]


_FLOATS = ("last_close", "target_weight", "target_qty")
_BYTES = ("regime", "retiring", "invested")  # signed bytes: -1 to 1, regimes below 128


def encode(columns: InstrumentColumns) -> dict[str, Any]:
    """The book entry (under COLUMNS_KEY) of these columns."""
    times = columns.last_bar_time
    shared = len(times) > 0 and times.count(times[0]) == len(times)
    out: dict[str, Any] = {"symbols": " ".join(columns.symbols),
                           "last_bar_time": times[0] if shared else list(times)}
    for name in _FLOATS:
        out[name] = _b64(array("d", getattr(columns, name)))
    for name in _BYTES:
        out[name] = _b64(array("b", getattr(columns, name)))
    return out


def entries(book: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each instrument's entry, {symbol: {last_bar_time, last_close, regime, retiring,
    decision}}, from a book of either form (none in a book with neither)."""
    if COLUMNS_KEY not in book:
        return dict(book.get(ENTRIES_KEY) or {})
    c = book[COLUMNS_KEY]
    symbols, times = c["symbols"], c["last_bar_time"]
    if isinstance(symbols, str):  # one string (version 9 on), else a list
        symbols = symbols.split()
    if not isinstance(times, list):  # one time every instrument shares (version 9 on)
        times = [times] * len(symbols)
    floats = {name: _unb64("d", c[name], len(symbols)) for name in _FLOATS}
    small = {name: _unb64("b", c[name], len(symbols)) for name in _BYTES}
    out = {}
    for i, symbol in enumerate(symbols):
        close, regime, invested = floats["last_close"][i], small["regime"][i], small["invested"][i]
        out[symbol] = {
            "last_bar_time": times[i],
            "last_close": None if math.isnan(close) else close,
            "regime": None if regime == NO_REGIME else regime,
            "retiring": bool(small["retiring"][i]),
            "decision": None if invested == NO_DECISION else {
                "invested": bool(invested), "target_weight": floats["target_weight"][i],
                "target_qty": floats["target_qty"][i]},
        }
    return out


def encode_positions(
    symbols: Sequence[str], qty: Sequence[float], avg_entry_price: Sequence[float]
) -> dict[str, Any]:
    """The book entry (under POSITION_COLUMNS_KEY) of the broker's positions."""
    return {"symbols": list(symbols), "qty": _b64(array("d", qty)),
            "avg_entry_price": _b64(array("d", avg_entry_price))}


def positions(book: dict[str, Any]) -> dict[str, tuple[float, float]] | None:
    """{symbol: (qty, avg_entry_price)} of the broker's positions in a book of either
    form; None in a book without them (written before they were kept)."""
    if POSITION_COLUMNS_KEY in book:
        c = book[POSITION_COLUMNS_KEY]
        symbols = c["symbols"]
        qty, avg = (_unb64("d", c[name], len(symbols)) for name in ("qty", "avg_entry_price"))
        return {symbol: (qty[i], avg[i]) for i, symbol in enumerate(symbols)}
    entries = book.get(POSITIONS_KEY)
    if entries is None:
        return None
    return {s: (float(e["qty"]), float(e["avg_entry_price"])) for s, e in entries.items()}


def _b64(values: array) -> str:  # type: ignore[type-arg]
    if sys.byteorder == "big":
        values.byteswap()
    return base64.b64encode(values.tobytes()).decode("ascii")


def _unb64(code: str, text: str, count: int) -> array:  # type: ignore[type-arg]
    values = array(code, base64.b64decode(text, validate=True))
    if len(values) != count:
        raise ValueError(f"the book's instrument columns hold {len(values)} values of a "
                         f"column where {count} instruments are named")
    if sys.byteorder == "big":
        values.byteswap()
    return values
