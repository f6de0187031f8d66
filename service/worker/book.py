"""What a worker knows about each instrument between updates, and its checkpoint form.

The numeric part (return windows, sampler carries) becomes the model-state blob; the
rest (last bar, decision, regime, rotation cursor) becomes the checkpoint's JSON book.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from regime_model.update import InstrumentCarry
from service.state.codec import decode_arrays, encode_arrays
from service.strategy import Decision, id_symbol_part, order_id_symbol
from service.types import Bar, BrokerSnapshot, Symbol


def instrument_key(symbol: Symbol) -> int:
    """A stable 32-bit key per symbol: the sampler's random streams are keyed by it."""
    return int.from_bytes(hashlib.blake2b(symbol.encode(), digest_size=4).digest(), "little")


@dataclass
class InstrumentState:
    symbol: Symbol
    returns: np.ndarray = field(default_factory=lambda: np.zeros(0))
    last_bar_time: datetime | None = None
    last_close: float | None = None
    carry: InstrumentCarry | None = None
    decision: Decision | None = None
    regime: int | None = None
    retiring: bool = False  # removed from the rotation; its position is being closed

    def append(self, bars: list[Bar], window: int) -> int:
        """Append bars newer than the last one seen; keep the last `window` returns."""
        fresh = [b for b in bars if self.last_bar_time is None or b.time > self.last_bar_time]
        closes = np.array([b.close for b in fresh], dtype=np.float64)
        if self.last_close is not None:
            closes = np.concatenate(([self.last_close], closes))
        if closes.size >= 2:
            self.returns = np.concatenate((self.returns, np.diff(np.log(closes))))[-window:]
        if fresh:
            self.last_bar_time, self.last_close = fresh[-1].time, fresh[-1].close
        return len(fresh)


@dataclass
class Book:
    instruments: dict[Symbol, InstrumentState]
    cursor: int = 0

    def ensure(self, symbols: tuple[Symbol, ...]) -> None:
        for symbol in symbols:
            self.instruments.setdefault(symbol, InstrumentState(symbol)).retiring = False

    def sync_rotation(
        self, symbols: tuple[Symbol, ...], on_removal: str
    ) -> tuple[list[Symbol], list[Symbol]]:
        """Make the book match the rotation: new symbols start cold; a symbol no longer in
        it is closed out ("close": retiring until flat) or forgotten ("keep").
        Returns (added, removed)."""
        wanted = set(symbols)
        added = sorted(wanted - self.instruments.keys())
        removed = sorted(s for s, st in self.instruments.items()
                         if s not in wanted and not st.retiring)
        self.ensure(symbols)
        for symbol in removed:
            if on_removal == "close":
                self.instruments[symbol].retiring = True
            else:
                del self.instruments[symbol]
        return added, removed

    def retiring(self) -> list[Symbol]:
        return sorted(s for s, st in self.instruments.items() if st.retiring)

    def drop_flat(self, snapshot: BrokerSnapshot) -> list[Symbol]:
        """Forget retiring symbols the broker shows flat with no order working: their past
        stays in older checkpoints and the decisions table."""
        working = {id_symbol_part(o.client_order_id) for o in snapshot.open_orders}
        flat = [s for s in self.retiring()
                if snapshot.qty(s) == 0 and order_id_symbol(s) not in working]
        for symbol in flat:
            del self.instruments[symbol]
        return flat


def encode_book(book: Book) -> tuple[bytes, dict[str, Any]]:
    arrays: dict[str, np.ndarray] = {}
    meta: dict[str, Any] = {"cursor": book.cursor, "instruments": {}}
    for symbol, state in sorted(book.instruments.items()):
        arrays[f"{symbol}/returns"] = state.returns
        if state.carry is not None:
            for name, value in state.carry._asdict().items():
                arrays[f"{symbol}/carry/{name}"] = value
        meta["instruments"][symbol] = _state_meta(state)
    return encode_arrays(arrays), meta


def decode_book(blob: bytes, meta: dict[str, Any]) -> Book:
    arrays = decode_arrays(blob)
    instruments = {
        symbol: _state_from(symbol, arrays, entry) for symbol, entry in meta["instruments"].items()
    }
    return Book(instruments=instruments, cursor=int(meta["cursor"]))


def _state_meta(state: InstrumentState) -> dict[str, Any]:
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


def _state_from(
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
