"""A worker's ModelState in checkpoint form, and back.

The sampler carries and a checksum of each return window become the model-state blob
(service.state.codec), the windows' new returns the returns table's rows
(service.state.returns_rows); the rest (last bar, decision, regime, where the rotation starts)
becomes the checkpoint's JSON book, its instruments as columns (service.state.book_columns).
The book's keys are persisted: renaming one breaks every database written before, unless a
migration (service.state.schema) rewrites it. Both forms of earlier versions still decode:
a SHA-256 per window and an object per instrument (up to schema version 5).
"""

from __future__ import annotations

import hashlib
import math
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from regime_model.update import InstrumentCarry
from service.model_state import InstrumentState, ModelState
from service.state import book_columns
from service.state.book_columns import InstrumentColumns
from service.state.codec import decode_arrays, encode_arrays
from service.state.errors import UnusableStateError
from service.state.records import Checkpoint, WindowWrite
from service.state.store import StateStore
from service.strategy import Decision
from service.types import BrokerSnapshot, Symbol

ROTATION_KEY = "cursor"  # the rotation's start; its name predates `rotation_start`
WARMING_KEY = "warming"  # {symbol: {bars_available, bars_needed, stage}}: not modelled yet
WINDOW_SHA = "window_sha256"  # [N, 32]: each window's SHA-256 (up to schema version 5)
WINDOW_CRC = "window_crc32"  # [N]: each instrument's CRC-32 of its return window
CARRY_ROWS = "carry_rows"  # which instruments the stacked "carry/<field>" arrays hold
POSITIONS_KEY = "broker_positions"  # {symbol: {qty, avg_entry_price}} at the update's snapshot


def positions_entry(snapshot: BrokerSnapshot) -> dict[str, dict[str, float]]:
    """The broker's positions as the update saw them: what `status` shows by default."""
    return {s: {"qty": p.qty, "avg_entry_price": p.avg_entry_price}
            for s, p in sorted(snapshot.positions.items())}


def window_digest(returns: np.ndarray) -> bytes:
    """SHA-256 of a return window's little-endian float64 bytes: what the blob of a
    checkpoint of schema version 4 or 5 keeps of it."""
    return hashlib.sha256(np.asarray(returns, dtype="<f8").tobytes()).digest()


def window_crc(returns: np.ndarray) -> int:
    """CRC-32 of a return window's little-endian float64 bytes: what the blob keeps of it
    since schema version 6. It guards the window's reconstruction from the returns table
    against a wrong row or a corrupt value (any error in up to 32 consecutive bits is
    caught, others but for a 2^-32 chance); SHA-256 guarded against nothing more here
    and cost 3x as much (0.8 against 0.27 ms at 268 instruments of 256 returns)."""
    return zlib.crc32(np.asarray(returns, dtype="<f8").tobytes())


def encode_model_state(
    state: ModelState,
) -> tuple[bytes, dict[str, Any], dict[Symbol, WindowWrite]]:
    """(model-state blob, JSON book, windows) of `state`. The windows go to the returns
    table (service.state.returns_rows), the blob keeps a digest of each, so the model
    digest still covers every input and a window read back is checked against it.

    The blob holds a few stacked arrays, the rows in the book's (sorted) symbol order:
    WINDOW_CRC [N], and the carries of one shape as CARRY_ROWS (their rows) and
    "carry/<field>" [M, ...]; a carry of another shape (a model changed under it) keeps
    the per-symbol keys "<symbol>/carry/<field>" of schema version 3. Stacked, encoding
    268 instruments costs a handful of numpy calls instead of four per instrument.
    """
    symbols = sorted(state.instruments)
    instruments = [state.instruments[s] for s in symbols]
    book: dict[str, Any] = {ROTATION_KEY: state.rotation_start,
                            book_columns.COLUMNS_KEY: _book_columns(symbols, instruments)}
    windows = {s: WindowWrite(_fresh(i), len(i.returns))
               for s, i in zip(symbols, instruments, strict=True)}  # fmt: skip
    arrays = _stacked_carries(symbols, state)
    arrays[WINDOW_CRC] = np.array([window_crc(i.returns) for i in instruments], np.uint32)
    return encode_arrays(arrays), book, windows


def _fresh(instrument: InstrumentState) -> np.ndarray:
    """The returns of the window not stored yet (the newest `unsaved`)."""
    returns = instrument.returns
    return returns[len(returns) - min(instrument.unsaved, len(returns)) :]


def _book_columns(symbols: list[Symbol], instruments: list[InstrumentState]) -> dict[str, Any]:
    """The instruments' book entry as columns (service.state.book_columns)."""
    stamps = {t: t.isoformat() for t in {i.last_bar_time for i in instruments} if t is not None}
    decisions = [i.decision for i in instruments]
    return book_columns.encode(InstrumentColumns(
        symbols=symbols,
        last_bar_time=[stamps[i.last_bar_time] if i.last_bar_time else None for i in instruments],
        last_close=[math.nan if i.last_close is None else i.last_close for i in instruments],
        regime=[book_columns.NO_REGIME if i.regime is None else int(i.regime)
                for i in instruments],
        retiring=[i.retiring for i in instruments],
        invested=[book_columns.NO_DECISION if d is None else int(d.invested) for d in decisions],
        target_weight=[0.0 if d is None else d.target_weight for d in decisions],
        target_qty=[0.0 if d is None else d.target_qty for d in decisions],
    ))


def _stacked_carries(symbols: list[Symbol], state: ModelState) -> dict[str, np.ndarray]:
    present = [(i, c) for i, s in enumerate(symbols)
               if (c := state.instruments[s].carry) is not None]  # fmt: skip
    first = _shape(present[0][1]) if present else None
    if all(_same_shape(c, first) for _, c in present):  # the usual case: one shape
        return _stack(present)
    shapes = Counter(_shape(c) for _, c in present)
    common = shapes.most_common(1)[0][0]
    arrays = _stack([(i, c) for i, c in present if _shape(c) == common])
    for i, carry in present:
        if _shape(carry) != common:
            for name, value in carry._asdict().items():
                arrays[f"{symbols[i]}/carry/{name}"] = value
    return arrays


def _stack(rows: list[tuple[int, InstrumentCarry]]) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {CARRY_ROWS: np.array([i for i, _ in rows], np.int64)}
    if rows:
        for k, name in enumerate(InstrumentCarry._fields):
            arrays[f"carry/{name}"] = np.array([c[k] for _, c in rows], dtype=np.float64)
    return arrays


def _same_shape(carry: InstrumentCarry, shape: tuple[tuple[int, ...], ...] | None) -> bool:
    position, step_size, inv_mass = carry  # compared without building a tuple per carry
    return shape == (position.shape, step_size.shape, inv_mass.shape)


def _shape(carry: InstrumentCarry) -> tuple[tuple[int, ...], ...]:
    return tuple(value.shape for value in carry)  # arrays, every field (regime_model.carry)


def decode_model_state(
    blob: bytes, book: dict[str, Any], windows: Mapping[str, Sequence[float]] | None = None
) -> ModelState:
    """The state of a checkpoint; `windows`: its return windows from the returns table
    (StateStore.windows), which a checkpoint of schema version 3 has in its blob instead."""
    arrays = decode_arrays(blob)
    entries = book_columns.entries(book)
    symbols = sorted(entries)
    checks = _window_checks(arrays, len(symbols))
    carries: dict[Symbol, InstrumentCarry] = {}
    if CARRY_ROWS in arrays:
        for k, i in enumerate(arrays[CARRY_ROWS].tolist()):
            carries[symbols[i]] = InstrumentCarry(
                *(arrays[f"carry/{name}"][k].copy() for name in InstrumentCarry._fields))
    instruments = {}
    for row, symbol in enumerate(symbols):
        check = None if checks is None else checks[row]
        returns, unsaved = _returns_of(symbol, arrays, (windows or {}).get(symbol), check)
        carry = carries.get(symbol) or _own_carry(symbol, arrays)
        instruments[symbol] = _instrument_from(symbol, entries[symbol], returns, unsaved, carry)
    return ModelState(instruments=instruments, rotation_start=int(book[ROTATION_KEY]))


def checkpoint_state(store: StateStore, checkpoint: Checkpoint) -> ModelState:
    """The model state `checkpoint` holds: its blob and book with its windows, which since
    schema version 4 are rows of the store's returns table (resume and replay read this)."""
    return decode_model_state(checkpoint.model, checkpoint.book, store.windows(checkpoint.seq))


def _own_carry(symbol: Symbol, arrays: dict[str, np.ndarray]) -> InstrumentCarry | None:
    """A carry under per-symbol keys (schema version 3, or a shape the others lack)."""
    names = [f"{symbol}/carry/{name}" for name in InstrumentCarry._fields]
    return InstrumentCarry(*(arrays[n] for n in names)) if all(n in arrays for n in names) else None


def _window_checks(arrays: dict[str, np.ndarray], count: int) -> list[Any] | None:
    """Each window's CRC-32 (an int), or for a checkpoint of schema version 4 or 5 its
    SHA-256 (bytes); None for version 3 (its windows are in the blob)."""
    if WINDOW_CRC in arrays:
        return [int(c) for c in arrays[WINDOW_CRC]]
    if WINDOW_SHA in arrays:
        return [bytes(d.tobytes()) for d in arrays[WINDOW_SHA]]
    return None


def _returns_of(
    symbol: Symbol,
    arrays: dict[str, np.ndarray],
    stored: Sequence[float] | None,
    check: int | bytes | None,
) -> tuple[np.ndarray, int]:
    """The instrument's window and how many of its returns are not in the returns table."""
    if f"{symbol}/returns" in arrays:  # schema version 3: the window in the blob, not stored
        returns = arrays[f"{symbol}/returns"]
        return returns, len(returns)
    if stored is None or check is None:
        raise UnusableStateError(
            f"{symbol}: the checkpoint has no return window for it in the returns table; "
            "restore the database from a backup"
        )
    returns = np.asarray(stored, dtype=np.float64)
    found = window_crc(returns) if isinstance(check, int) else window_digest(returns)
    if found != check:
        raise UnusableStateError(
            f"{symbol}: its return window in the returns table does not match the "
            "checkpoint's digest of it; restore the database from a backup"
        )
    return returns, 0


def _instrument_from(
    symbol: Symbol,
    entry: dict[str, Any],
    returns: np.ndarray,
    unsaved: int,
    carry: InstrumentCarry | None,
) -> InstrumentState:
    decision = entry["decision"]
    last = entry["last_bar_time"]
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
