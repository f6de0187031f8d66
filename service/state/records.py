"""What one update writes into the state database, and its row forms."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from service.state.errors import UnusableStateError
from service.types import OrderIntent, OrderStatus, Side

if TYPE_CHECKING:  # `status` reads these records without loading numpy
    import numpy as np


class DecisionRow(NamedTuple):
    """One instrument's decision at an update (a NamedTuple: a warm update makes one per
    instrument, 268 of them in 0.2 ms where a frozen dataclass took 0.8 ms)."""

    symbol: str
    regime: int
    p_turbulent: float
    pred_mean: float
    pred_vol: float
    converged: bool
    target_weight: float
    target_qty: float
    # For the history tables only (service.state.history), not the decisions table:
    p_turbulent_sd: float = 0.0  # posterior sd of p_turbulent
    close: float = 0.0  # the instrument's last close at the update
    position_qty: float = 0.0  # what the broker held at the update's snapshot


class DecisionColumns(NamedTuple):
    """An update's decisions as columns: DecisionRow's fields, each a list with an entry
    per instrument in `symbol`'s order. The strategy decides in columns and the tables
    keep columns (service.state.decision_columns); a row per instrument made in between and
    taken apart again cost 0.16 ms at 268 instruments, packing the columns as they are
    0.06 (docs/bench-results/columns_and_sums.py)."""

    symbol: list[str]
    regime: list[int]
    p_turbulent: list[float]
    pred_mean: list[float]
    pred_vol: list[float]
    converged: list[bool]
    target_weight: list[float]
    target_qty: list[float]
    p_turbulent_sd: list[float]
    close: list[float]
    position_qty: list[float]

    @classmethod
    def of(cls, rows: Sequence[DecisionRow]) -> DecisionColumns:
        """The columns of these rows, in their order (none of none)."""
        columns = list(map(list, zip(*rows, strict=True)))
        return cls(*columns) if columns else cls(*([] for _ in cls._fields))


@dataclass(frozen=True)
class Checkpoint:
    seq: int
    bar_time: datetime
    config_hash: str
    backend: str
    adapter: str
    numerics: str
    cash: float
    equity: float
    model: bytes
    book: dict[str, Any]

    @property
    def model_digest(self) -> str:
        return hashlib.sha256(self.model).hexdigest()


@dataclass(frozen=True)
class WindowWrite:
    """One instrument's window at a checkpoint: the returns that arrived since the last
    checkpoint (`fresh`, oldest first) and how many of the newest stored ones it spans."""

    fresh: np.ndarray
    length: int


@dataclass(frozen=True)
class WindowColumns:
    """Every instrument's window at a checkpoint, as the returns table stores them
    (service.state.returns_rows): symbols[i] has counts[i] returns that arrived since the
    last checkpoint, oldest first, after those of the symbols before it in `fresh` (their
    little-endian float64 bytes), and a window of the newest lengths[i] stored returns.
    A warm update builds it from the returns' columns at once (checkpoint_codec)."""

    symbols: list[str]
    counts: list[int]
    fresh: bytes
    lengths: list[int]

    @classmethod
    def of(cls, windows: Mapping[str, WindowWrite]) -> WindowColumns:
        """The columns of per-instrument windows, in the mapping's order."""
        entries = list(windows.values())
        return cls(list(windows), [len(w.fresh) for w in entries],
                   b"".join([w.fresh.astype("<f8", copy=False).tobytes() for w in entries]),
                   [w.length for w in entries])


@dataclass(frozen=True)
class IntentRecord:
    intent: OrderIntent
    seq: int
    status: OrderStatus


def checkpoint_row(c: Checkpoint) -> tuple[Any, ...]:
    book = json.dumps(c.book, sort_keys=True, separators=(",", ":"))
    return (c.seq, c.bar_time.isoformat(), c.config_hash, c.backend, c.adapter, c.numerics,
            c.cash, c.equity, c.model, c.model_digest, book)


def checkpoint_from_row(row: Sequence[Any]) -> Checkpoint:
    checkpoint = Checkpoint(
        seq=int(row[0]),
        bar_time=datetime.fromisoformat(row[1]),
        config_hash=row[2],
        backend=row[3],
        adapter=row[4],
        numerics=row[5],
        cash=float(row[6]),
        equity=float(row[7]),
        model=bytes(row[8]),
        book=json.loads(row[10]),
    )
    if checkpoint.model_digest != row[9]:
        raise UnusableStateError(
            f"checkpoint {checkpoint.seq}: model state does not match its digest; "
            "restore the database from a backup"
        )
    return checkpoint


def pending_intent_row(seq: int, i: OrderIntent) -> tuple[Any, ...]:
    return (i.client_order_id, seq, i.symbol, i.side.value, i.qty, OrderStatus.PENDING.value)


def intent_from_row(row: Iterable[Any]) -> IntentRecord:
    cid, symbol, side, qty, seq, status = row
    intent = OrderIntent(client_order_id=cid, symbol=symbol, side=Side(side), qty=float(qty))
    return IntentRecord(intent=intent, seq=int(seq), status=OrderStatus(status))
