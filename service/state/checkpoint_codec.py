"""A worker's ModelState in checkpoint form, and back.

The sampler carries become the carries table's row (service.state.carry_stacks), the
windows' new returns the returns table's rows (service.state.returns_rows), a checksum of
each window and the carries row's SHA-256 the model-state blob (service.state.codec); the
rest (last bar, decision, regime, where the rotation starts) becomes the checkpoint's JSON
book, its instruments as columns (service.state.book_columns). The book's keys are
persisted: renaming one breaks every database written before, unless a migration
(service.state.schema) rewrites it. The forms of earlier versions still decode: carries
in the blob (up to 8), a SHA-256 per window and an object per instrument (up to 5).
"""

from __future__ import annotations

import hashlib
import math
import operator
import zlib
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

import numpy as np

from regime_model.update import InstrumentCarry
from service.model_state import InstrumentState, ModelState, ReturnsTable
from service.state import book_columns, carry_stacks
from service.state.book_columns import InstrumentColumns
from service.state.carry_stacks import CarriesAhead, CarryBlob
from service.state.codec import CodecError, decode_arrays, encode_arrays
from service.state.errors import UnusableStateError
from service.state.records import Checkpoint, WindowColumns, WindowWrite
from service.state.store import StateStore
from service.state.window_sums import table_sums, window_sum
from service.strategy import Decision
from service.types import BrokerSnapshot, Symbol

ROTATION_KEY = "cursor"  # the rotation's start; its name predates `rotation_start`
WARMING_KEY = "warming"  # {symbol: {bars_available, bars_needed, stage}}: not modelled yet
WINDOW_SHA = "window_sha256"  # [N, 32]: each window's SHA-256 (up to schema version 5)
WINDOW_CRC = "window_crc32"  # [N]: each window's CRC-32 (schema 6 to the 37th session)
WINDOW_SUM = "window_sum64"  # [N]: each window's weighted sum (service.state.window_sums)
POSITIONS_KEY = book_columns.POSITION_COLUMNS_KEY  # the broker's positions at the snapshot
CARRIES_SHA = "carries_sha256"  # [32]: the SHA-256 of the checkpoint's carries row (v9 on)
_LAST_BAR_TIME = operator.attrgetter("last_bar_time")
_LAST_CLOSE = operator.attrgetter("last_close")
_REGIME = operator.attrgetter("regime")
_RETIRING = operator.attrgetter("retiring")
_DECISION = operator.attrgetter("decision")
_CARRY = operator.attrgetter("carry")
_UNDECIDED = Decision("", False, 0.0, 0.0)  # stands in for no decision in the book's columns
_UNSAVED = operator.attrgetter("unsaved")
_INVESTED = operator.attrgetter("invested")
_WEIGHT = operator.attrgetter("target_weight")
_TARGET_QTY = operator.attrgetter("target_qty")
_QTY = operator.attrgetter("qty")
_AVG_ENTRY = operator.attrgetter("avg_entry_price")


def positions_entry(snapshot: BrokerSnapshot) -> dict[str, Any]:
    """The broker's positions as the update saw them, as columns (POSITION_COLUMNS_KEY):
    what `status` shows by default."""
    held = sorted(snapshot.positions.items())
    positions = [p for _, p in held]
    return book_columns.encode_positions([s for s, _ in held], list(map(_QTY, positions)),
                                         list(map(_AVG_ENTRY, positions)))


def window_digest(returns: np.ndarray) -> bytes:
    """SHA-256 of a return window's little-endian float64 bytes: what the blob of a
    checkpoint of schema version 4 or 5 keeps of it."""
    return hashlib.sha256(np.asarray(returns, dtype="<f8").tobytes()).digest()


def window_crc(returns: np.ndarray) -> int:
    """CRC-32 of a return window's little-endian float64 bytes: what the blob of a
    checkpoint kept of it from schema version 6 to the thirty-seventh session (it cost
    0.17 ms at 268 windows of 256 returns, the weighted sums 0.03:
    docs/bench-results/columns_and_sums.py)."""
    return zlib.crc32(np.asarray(returns, dtype="<f8").tobytes())


def book_carries(state: ModelState) -> list[InstrumentCarry | None]:
    """The instruments' carries in the book's order: what a checkpoint of `state` holds
    (CarriesAhead.prepare encodes them so ahead of it)."""
    return [state.instruments[s].carry for s in sorted(state.instruments)]


class EncodedState(NamedTuple):
    """A ModelState in the forms a checkpoint writes (encode_model_state)."""

    model: bytes  # the model-state blob
    book: dict[str, Any]  # the JSON book
    windows: WindowColumns  # for the returns table
    carries: CarryBlob  # the carries row; the blob keeps its digest


def encode_model_state(state: ModelState, ahead: CarriesAhead | None = None) -> EncodedState:
    """`state` as a checkpoint writes it. The windows go to the returns table
    (service.state.returns_rows), the carries to the carries table, and the blob keeps a
    digest of each, so the model digest still covers every input and what is read back
    is checked against it.

    The blob holds WINDOW_SUM [N] (the rows in the book's sorted symbol order) and
    CARRIES_SHA; the carries row, the carries stacked by shape (service.state.carry_stacks):
    a handful of numpy calls for 268 instruments instead of four per instrument. After
    a warm update, whose windows are rows of one table (service.model_state.ReturnsTable),
    the windows' newest returns and their sums are read from that table at once. `ahead`:
    the carries encoded before (CarriesAhead), taken where they are still the state's.
    """
    symbols = sorted(state.instruments)
    instruments = list(map(state.instruments.__getitem__, symbols))
    book: dict[str, Any] = {ROTATION_KEY: state.rotation_start,
                            book_columns.COLUMNS_KEY: _book_columns(symbols, instruments)}
    warm = _warm_rows(state, instruments)
    if warm is not None:  # each window one return on, each the table's row
        table, rows = warm
        view = table.view.astype("<f8", copy=False)  # [R, T], little-endian: a view
        windows = WindowColumns(symbols, [1] * len(symbols), view[rows, -1].tobytes(),
                                [view.shape[1]] * len(symbols))
        sums = table_sums(table)[rows]  # every row's, slid on; then the instruments'
    else:
        windows = WindowColumns.of({s: WindowWrite(_fresh(i), len(i.returns))
                                    for s, i in zip(symbols, instruments, strict=True)})
        sums = np.array([window_sum(i.returns) for i in instruments], np.uint64)
    carries = list(map(_CARRY, instruments))
    blob = ahead.encoded(carries) if ahead is not None else carry_stacks.encode(carries)
    model = encode_arrays({WINDOW_SUM: sums, CARRIES_SHA: np.frombuffer(blob.digest, np.uint8)})
    return EncodedState(model, book, windows, blob)


def _warm_rows(
    state: ModelState, instruments: list[InstrumentState]
) -> tuple[ReturnsTable, list[int]] | None:
    """The state's returns table and each instrument's row of its windows, if each holds
    one return not saved yet and is a row of the table; None if not. Not gathered: the
    rows' sums and newest returns are taken from the table (not a copy of every window:
    548 KB at 268 instruments)."""
    table = state.returns_table
    if table is None or set(map(_UNSAVED, instruments)) != {1}:
        return None
    rows = table.rows_of(instruments)
    return None if rows is None else (table, rows)


def _fresh(instrument: InstrumentState) -> np.ndarray:
    """The returns of the window not stored yet (the newest `unsaved`)."""
    returns = instrument.returns
    return returns[len(returns) - min(instrument.unsaved, len(returns)) :]


def _book_columns(symbols: list[Symbol], instruments: list[InstrumentState]) -> dict[str, Any]:
    """The instruments' book entry as columns (service.state.book_columns), each read with
    a map over the instruments; an absent value becomes its column's sentinel."""
    times = list(map(_LAST_BAR_TIME, instruments))
    stamps: dict[datetime | None, str | None] = {None: None}
    stamps.update((t, t.isoformat()) for t in set(times) if t is not None)
    decisions = list(map(_DECISION, instruments))
    decided = _absent_as(decisions, _UNDECIDED)  # weight and quantity 0 where undecided
    invested = list(map(int, map(_INVESTED, decided)))
    if None in decisions:
        invested = [book_columns.NO_DECISION if d is None else i
                    for d, i in zip(decisions, invested, strict=True)]  # fmt: skip
    return book_columns.encode(InstrumentColumns(
        symbols=symbols,
        last_bar_time=list(map(stamps.__getitem__, times)),
        last_close=_absent_as(list(map(_LAST_CLOSE, instruments)), math.nan),
        regime=_absent_as(list(map(_REGIME, instruments)), book_columns.NO_REGIME),
        retiring=list(map(_RETIRING, instruments)),
        invested=invested,
        target_weight=list(map(_WEIGHT, decided)),
        target_qty=list(map(_TARGET_QTY, decided)),
    ))


def _absent_as(values: list[Any], sentinel: Any) -> list[Any]:
    """`values` with each None as `sentinel` (the list itself where none is absent)."""
    return values if None not in values else [sentinel if v is None else v for v in values]


def decode_model_state(
    blob: bytes,
    book: dict[str, Any],
    windows: Mapping[str, Sequence[float]] | None = None,
    carries_row: bytes | None = None,
) -> ModelState:
    """The state of a checkpoint; `windows`: its return windows from the returns table
    (StateStore.windows), which a checkpoint of schema version 3 has in its blob instead;
    `carries_row`: its carries (StateStore.carries), which one of version 8 or before has
    in its blob instead."""
    arrays = decode_arrays(blob)
    if CARRIES_SHA in arrays:
        arrays.update(_carries_of(arrays.pop(CARRIES_SHA).tobytes(), carries_row))
    entries = book_columns.entries(book)
    symbols = sorted(entries)
    checks = _window_checks(arrays)
    carries = carry_stacks.unstack(arrays, symbols)
    instruments = {}
    for row, symbol in enumerate(symbols):
        check = None if checks is None else (checks[0], checks[1][row])
        returns, unsaved = _returns_of(symbol, arrays, (windows or {}).get(symbol), check)
        carry = carries.get(symbol)
        instruments[symbol] = _instrument_from(symbol, entries[symbol], returns, unsaved, carry)
    return ModelState(instruments=instruments, rotation_start=int(book[ROTATION_KEY]))


def checkpoint_state(store: StateStore, checkpoint: Checkpoint) -> ModelState:
    """The model state `checkpoint` holds: its blob and book with its windows, which since
    schema version 4 are rows of the store's returns table (resume and replay read this).
    A blob that matches its digest but is not in a form this release reads (a newer
    release wrote it) is UnusableStateError: the account is parked, not restarted."""
    windows, carries = store.windows(checkpoint.seq), store.carries(checkpoint.seq)
    try:
        return decode_model_state(checkpoint.model, checkpoint.book, windows, carries)
    except CodecError as error:
        raise UnusableStateError(
            f"{store.path}: checkpoint {checkpoint.seq}'s model state cannot be read by this "
            f"release ({error}); run the release that wrote it, or restore the database "
            "from a backup"
        ) from None
    except UnusableStateError as error:  # a window or the carries row not the checkpoint's
        raise UnusableStateError(f"{store.path}: checkpoint {checkpoint.seq}: {error}") from None


def _carries_of(digest: bytes, carries: bytes | None) -> dict[str, np.ndarray]:
    """The arrays of the carries row whose SHA-256 the blob keeps (`digest`)."""
    if carries is None or hashlib.sha256(carries).digest() != digest:
        found = "missing" if carries is None else "not the one its digest names"
        raise UnusableStateError(f"its carries row (the carries table) is {found}; restore "
                                 "the database from a backup")
    return decode_arrays(carries)


def _window_checks(
    arrays: dict[str, np.ndarray],
) -> tuple[Callable[[np.ndarray], Any], list[Any]] | None:
    """How each window is checked, and each one's check: its weighted sum (an int), or
    for an older checkpoint its CRC-32 (an int, schema version 6 up to the thirty-seventh
    session) or its SHA-256 (bytes, versions 4 and 5); None for version 3 (its windows
    are in the blob)."""
    if WINDOW_SUM in arrays:
        return window_sum, [int(c) for c in arrays[WINDOW_SUM]]
    if WINDOW_CRC in arrays:
        return window_crc, [int(c) for c in arrays[WINDOW_CRC]]
    if WINDOW_SHA in arrays:
        return window_digest, [bytes(d.tobytes()) for d in arrays[WINDOW_SHA]]
    return None


def _returns_of(
    symbol: Symbol,
    arrays: dict[str, np.ndarray],
    stored: Sequence[float] | None,
    check: tuple[Callable[[np.ndarray], Any], Any] | None,
) -> tuple[np.ndarray, int]:
    """The instrument's window and how many of its returns are not in the returns table;
    `check`: the function that checks it and what it must give."""
    if f"{symbol}/returns" in arrays:  # schema version 3: the window in the blob, not stored
        returns = arrays[f"{symbol}/returns"]
        return returns, len(returns)
    if stored is None or check is None:
        raise UnusableStateError(
            f"{symbol}: the checkpoint has no return window for it in the returns table; "
            "restore the database from a backup"
        )
    returns = np.asarray(stored, dtype=np.float64)
    checker, expected = check
    if checker(returns) != expected:
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
