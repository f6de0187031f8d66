"""What a worker knows about each instrument between updates: the model's inputs and
carries, the strategy's last decision, and where the rotation starts next.

Its checkpoint form (a model-state blob and a JSON book) is service.state.checkpoint_codec's.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from regime_model.update import InstrumentCarry
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
    # Returns appended since the last checkpoint stored them (the newest `unsaved` of
    # `returns`, or all of them if more arrived than a window holds).
    unsaved: int = 0

    def append(self, bars: list[Bar], window: int) -> int:
        """Append bars newer than the last one seen; keep the last `window` returns."""
        fresh = [b for b in bars if self.last_bar_time is None or b.time > self.last_bar_time]
        closes = np.array([b.close for b in fresh], dtype=np.float64)
        if self.last_close is not None:
            closes = np.concatenate(([self.last_close], closes))
        if closes.size >= 2:
            logs = np.log(closes)  # np.diff's own arithmetic, without its per-call checks
            self.returns = np.concatenate((self.returns, logs[1:] - logs[:-1]))[-window:]
            self.unsaved += closes.size - 1
        if fresh:
            self.last_bar_time, self.last_close = fresh[-1].time, fresh[-1].close
        return len(fresh)


@dataclass
class ModelState:
    """One account's model and strategy state: per instrument, and the rotation's place."""

    instruments: dict[Symbol, InstrumentState]
    rotation_start: int = 0  # index of the first symbol of the next batch (rotation.py)

    def ensure(self, symbols: tuple[Symbol, ...]) -> None:
        for symbol in symbols:
            self.instruments.setdefault(symbol, InstrumentState(symbol)).retiring = False

    def sync_rotation(
        self, symbols: tuple[Symbol, ...], on_removal: str
    ) -> tuple[list[Symbol], list[Symbol]]:
        """Make the state match the rotation: new symbols start cold; a symbol no longer in
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

    def saved(self) -> None:
        """A checkpoint committed every instrument's returns."""
        for instrument in self.instruments.values():
            instrument.unsaved = 0

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
