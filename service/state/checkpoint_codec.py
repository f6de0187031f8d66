"""A worker's ModelState in checkpoint form, and back.

The numeric part (return windows, sampler carries) becomes the model-state blob
(service.state.codec); the rest (last bar, decision, regime, where the rotation starts)
becomes the checkpoint's JSON book. The book's keys are persisted: renaming one breaks
every database written before, unless a migration (service.state.schema) rewrites it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np

from regime_model.update import InstrumentCarry
from service.model_state import InstrumentState, ModelState
from service.state.codec import decode_arrays, encode_arrays
from service.strategy import Decision
from service.types import BrokerSnapshot, Symbol

ROTATION_KEY = "cursor"  # the rotation's start; its name predates `rotation_start`
WARMING_KEY = "warming"  # {symbol: {bars_available, bars_needed, stage}}: not modelled yet
POSITIONS_KEY = "broker_positions"  # {symbol: {qty, avg_entry_price}} at the update's snapshot


def positions_entry(snapshot: BrokerSnapshot) -> dict[str, dict[str, float]]:
    """The broker's positions as the update saw them: what `status` shows by default."""
    return {s: {"qty": p.qty, "avg_entry_price": p.avg_entry_price}
            for s, p in sorted(snapshot.positions.items())}


def encode_model_state(state: ModelState) -> tuple[bytes, dict[str, Any]]:
    """(model-state blob, JSON book) of `state`."""
    arrays: dict[str, np.ndarray] = {}
    book: dict[str, Any] = {ROTATION_KEY: state.rotation_start, "instruments": {}}
    for symbol, instrument in sorted(state.instruments.items()):
        arrays[f"{symbol}/returns"] = instrument.returns
        if instrument.carry is not None:
            for name, value in instrument.carry._asdict().items():
                arrays[f"{symbol}/carry/{name}"] = value
        book["instruments"][symbol] = _instrument_book(instrument)
    return encode_arrays(arrays), book


def decode_model_state(blob: bytes, book: dict[str, Any]) -> ModelState:
    arrays = decode_arrays(blob)
    instruments = {
        symbol: _instrument_from(symbol, arrays, entry)
        for symbol, entry in book["instruments"].items()
    }
    return ModelState(instruments=instruments, rotation_start=int(book[ROTATION_KEY]))


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
    symbol: Symbol, arrays: dict[str, np.ndarray], entry: dict[str, Any]
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
    return InstrumentState(
        symbol=symbol,
        returns=arrays[f"{symbol}/returns"],
        last_bar_time=datetime.fromisoformat(last) if last else None,
        last_close=entry["last_close"],
        carry=carry,
        decision=None if decision is None else Decision(symbol, **decision),
        regime=entry["regime"],
        retiring=bool(entry.get("retiring", False)),
    )
