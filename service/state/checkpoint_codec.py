"""A worker's ModelState in checkpoint form, and back.

The sampler carries and a digest of each return window become the model-state blob
(service.state.codec), the windows' new returns the returns table's rows
(service.state.returns_rows); the rest (last bar, decision, regime, where the rotation starts)
becomes the checkpoint's JSON book. The book's keys are persisted: renaming one breaks
every database written before, unless a migration (service.state.schema) rewrites it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from regime_model.update import InstrumentCarry
from service.model_state import InstrumentState, ModelState
from service.state.codec import decode_arrays, encode_arrays
from service.state.errors import UnusableStateError
from service.state.records import WindowWrite
from service.strategy import Decision
from service.types import BrokerSnapshot, Symbol

ROTATION_KEY = "cursor"  # the rotation's start; its name predates `rotation_start`
WARMING_KEY = "warming"  # {symbol: {bars_available, bars_needed, stage}}: not modelled yet
WINDOW_SHA = "window_sha256"  # the blob's digest of an instrument's return window
POSITIONS_KEY = "broker_positions"  # {symbol: {qty, avg_entry_price}} at the update's snapshot


def positions_entry(snapshot: BrokerSnapshot) -> dict[str, dict[str, float]]:
    """The broker's positions as the update saw them: what `status` shows by default."""
    return {s: {"qty": p.qty, "avg_entry_price": p.avg_entry_price}
            for s, p in sorted(snapshot.positions.items())}


def window_digest(returns: np.ndarray) -> bytes:
    """SHA-256 of a return window's little-endian float64 bytes: what the blob keeps of it."""
    return hashlib.sha256(np.asarray(returns, dtype="<f8").tobytes()).digest()


def encode_model_state(
    state: ModelState,
) -> tuple[bytes, dict[str, Any], dict[Symbol, WindowWrite]]:
    """(model-state blob, JSON book, windows) of `state`. The windows go to the returns
    table (service.state.returns_rows), the blob keeps a digest of each, so the model
    digest still covers every input and a window read back is checked against it."""
    arrays: dict[str, np.ndarray] = {}
    book: dict[str, Any] = {ROTATION_KEY: state.rotation_start, "instruments": {}}
    windows: dict[Symbol, WindowWrite] = {}
    for symbol, instrument in sorted(state.instruments.items()):
        returns = instrument.returns
        arrays[f"{symbol}/{WINDOW_SHA}"] = np.frombuffer(window_digest(returns), np.uint8)
        fresh = returns[len(returns) - min(instrument.unsaved, len(returns)) :]
        windows[symbol] = WindowWrite(fresh, len(returns))
        if instrument.carry is not None:
            for name, value in instrument.carry._asdict().items():
                arrays[f"{symbol}/carry/{name}"] = value
        book["instruments"][symbol] = _instrument_book(instrument)
    return encode_arrays(arrays), book, windows


def decode_model_state(
    blob: bytes, book: dict[str, Any], windows: Mapping[str, Sequence[float]] | None = None
) -> ModelState:
    """The state of a checkpoint; `windows`: its return windows from the returns table
    (StateStore.windows), which a checkpoint of schema version 3 has in its blob instead."""
    arrays = decode_arrays(blob)
    instruments = {
        symbol: _instrument_from(symbol, arrays, entry, (windows or {}).get(symbol))
        for symbol, entry in book["instruments"].items()
    }
    return ModelState(instruments=instruments, rotation_start=int(book[ROTATION_KEY]))


def _returns_of(
    symbol: Symbol, arrays: dict[str, np.ndarray], stored: Sequence[float] | None
) -> tuple[np.ndarray, int]:
    """The instrument's window and how many of its returns are not in the returns table."""
    if f"{symbol}/returns" in arrays:  # schema version 3: the window in the blob, not stored
        returns = arrays[f"{symbol}/returns"]
        return returns, len(returns)
    if stored is None:
        raise UnusableStateError(
            f"{symbol}: the checkpoint has no return window for it in the returns table; "
            "restore the database from a backup"
        )
    returns = np.asarray(stored, dtype=np.float64)
    if window_digest(returns) != arrays[f"{symbol}/{WINDOW_SHA}"].tobytes():
        raise UnusableStateError(
            f"{symbol}: its return window in the returns table does not match the "
            "checkpoint's digest of it; restore the database from a backup"
        )
    return returns, 0


def _instrument_book(state: InstrumentState) -> dict[str, Any]:
    decision = state.decision
    return {
        "last_bar_time": state.last_bar_time.isoformat() if state.last_bar_time else None,
        "last_close": state.last_close,
        "regime": state.regime,
        "retiring": state.retiring,
        "decision": None
        if decision is None
        else {
            "invested": decision.invested,
            "target_weight": decision.target_weight,
            "target_qty": decision.target_qty,
        },
    }


def _instrument_from(
    symbol: Symbol,
    arrays: dict[str, np.ndarray],
    entry: dict[str, Any],
    stored: Sequence[float] | None,
) -> InstrumentState:
    carry_fields = InstrumentCarry._fields
    has_carry = all(f"{symbol}/carry/{name}" in arrays for name in carry_fields)
    carry = (
        InstrumentCarry(*(arrays[f"{symbol}/carry/{name}"] for name in carry_fields))
        if has_carry
        else None
    )
    decision = entry["decision"]
    last = entry["last_bar_time"]
    returns, unsaved = _returns_of(symbol, arrays, stored)
    return InstrumentState(
        symbol=symbol,
        returns=returns,
        last_bar_time=datetime.fromisoformat(last) if last else None,
        last_close=entry["last_close"],
        carry=carry,
        decision=None if decision is None else Decision(symbol, **decision),
        regime=entry["regime"],
        retiring=bool(entry.get("retiring", False)),
        unsaved=unsaved,
    )
