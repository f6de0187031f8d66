"""The sampler carries of a checkpoint: stacked by shape, encoded, and back.

A checkpoint's carries are a row of their own, `carries` (schema version 9, CarryBlob);
its model-state blob keeps their digest. Up to version 8 the blob held them itself, with
the keys below; both forms decode (service.state.checkpoint_codec).

The largest group of one shape keeps the keys CARRY_ROWS (its instruments' rows in the
book's sorted symbols) and "carry/<field>" [M, ...]; each other shape g the same keys
suffixed, "carry_rows#g" and "carry#g/<field>". An instrument run on between bars starts
its next update with a block's 32 chains, so two shapes are the trial shape's usual case
(28 and 26 of a 54-instrument account in a round, thirty-sixth session), not a model
changed under the state. Carries kept under per-symbol keys "<symbol>/carry/<field>"
(schema version 3, and any shape but the commonest before the groups) still decode.
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from regime_model.update import InstrumentCarry
from service.state.codec import encode_arrays
from service.types import Symbol

CARRY_ROWS = "carry_rows"  # which instruments the stacked "carry/<field>" arrays hold


def stack(carries: Sequence[InstrumentCarry | None]) -> dict[str, np.ndarray]:
    """The carries of the instruments in book order (None: none), one stack per shape."""
    rows = [i for i, c in enumerate(carries) if c is not None] if None in carries \
        else list(range(len(carries)))  # fmt: skip
    present = [c for c in map(carries.__getitem__, rows) if c is not None]
    arrays = _stack(rows, present)
    if arrays is not None:  # all of one shape
        return arrays
    groups: dict[tuple[tuple[int, ...], ...], list[int]] = {}
    for i, carry in zip(rows, present, strict=True):
        groups.setdefault(_shape(carry), []).append(i)
    out: dict[str, np.ndarray] = {}
    for g, members in enumerate(sorted(groups.values(), key=lambda m: (-len(m), m[0]))):
        stacked = _stack(members, [c for c in map(carries.__getitem__, members)
                                   if c is not None]) or {}  # fmt: skip
        out.update((_group_key(key, g), value) for key, value in stacked.items())
    return out


class CarryBlob(NamedTuple):
    """A checkpoint's carries as its `carries` row holds them (schema version 9)."""

    arrays: bytes  # codec.encode_arrays(stack(carries))
    digest: bytes  # SHA-256 of `arrays`: the model-state blob keeps it (checkpoint_codec)


def encode(carries: Sequence[InstrumentCarry | None]) -> CarryBlob:
    """The carries of the instruments in book order as a carries row."""
    arrays = encode_arrays(stack(carries))
    return CarryBlob(arrays, hashlib.sha256(arrays).digest())


Stage = Callable[[int, bytes], bool]  # StateStore.stage_carries: (seq, arrays) -> written


class CarriesAhead:
    """Carries encoded, and written, before the checkpoint that holds them. With [model]
    sample_between_bars the sampler sets the carries between bars, after an update's
    commit, and the next update's checkpoint holds those very objects: stacking and
    narrowing them there took 1.0 and 0.32 ms of the daemon's checkpoint at 268
    instruments an account on an H100 host (thirty-ninth session), and their bytes are
    most of the bar's synced WAL. So the worker encodes them right after the sampler and
    stages them as the next checkpoint's carries row, in a transaction of their own
    (`prepare`); that checkpoint takes the encoding (`encoded`) where its carries are the
    objects encoded, in the same order, and writes no row where the one staged is for its
    seq (`to_write`). Otherwise (a carry set since by a warm-up's adoption, an instrument
    added or gone, a staging that failed) it encodes its own and writes the row in its own
    transaction, as without. The checkpoint's bytes are the same either way."""

    def __init__(self) -> None:
        self._carries: list[InstrumentCarry | None] = []
        self._blob: CarryBlob | None = None
        self._staged_for: int | None = None  # the seq of the checkpoint staged for

    def prepare(self, carries: Sequence[InstrumentCarry | None], seq: int, stage: Stage) -> None:
        """Encode `carries` (the instruments' in book order) now, and stage them as
        checkpoint `seq`'s carries row."""
        self._carries, self._blob = list(carries), encode(carries)
        self._staged_for = seq if stage(seq, self._blob.arrays) else None

    def encoded(self, carries: Sequence[InstrumentCarry | None]) -> CarryBlob:
        """encode(carries): the one prepared if they are these very carries, else now."""
        blob = self._blob
        if blob is not None and len(carries) == len(self._carries) \
                and all(map(operator.is_, carries, self._carries)):  # fmt: skip
            return blob
        return encode(carries)

    def to_write(self, blob: CarryBlob, seq: int) -> bytes | None:
        """The carries row checkpoint `seq` writes for `blob`: none where it was staged."""
        return None if blob is self._blob and self._staged_for == seq else blob.arrays


def unstack(arrays: dict[str, np.ndarray], symbols: list[Symbol]) -> dict[Symbol, InstrumentCarry]:
    """The carries a blob's arrays hold, by symbol (`symbols`: the book's, sorted)."""
    carries: dict[Symbol, InstrumentCarry] = {}
    group = 0
    while _group_key(CARRY_ROWS, group) in arrays:  # one stack per shape
        rows = arrays[_group_key(CARRY_ROWS, group)].tolist()
        fields = [arrays[_group_key(f"carry/{name}", group)]
                  for name in InstrumentCarry._fields] if rows else []  # fmt: skip
        for k, i in enumerate(rows):
            carries[symbols[i]] = InstrumentCarry(*(field[k].copy() for field in fields))
        group += 1
    for symbol in symbols:
        if symbol not in carries and (own := _own_carry(symbol, arrays)) is not None:
            carries[symbol] = own
    return carries


def _group_key(key: str, group: int) -> str:
    """The blob key of a carry stack's array for shape group `group` (0: the key itself,
    as before there were groups): CARRY_ROWS#g, carry#g/<field>."""
    if group == 0:
        return key
    head, _, tail = key.partition("/")
    return f"{head}#{group}" + (f"/{tail}" if tail else "")


def _stack(rows: list[int], carries: list[InstrumentCarry]) -> dict[str, np.ndarray] | None:
    """Carries as arrays [M, ...], or None if their shapes differ. Checked in C: each
    field's lengths by map, the rest of its shape by np.concatenate, which refuses arrays
    of another rank or other trailing dimensions (np.array would look for the shape again
    in every carry, at three times the cost)."""
    arrays: dict[str, np.ndarray] = {CARRY_ROWS: np.array(rows, np.int64)}
    if not carries:
        return arrays
    for name, values in zip(InstrumentCarry._fields, zip(*carries, strict=True), strict=True):
        if len(set(map(len, values))) != 1:
            return None
        try:
            stacked = np.concatenate(values, dtype=np.float64)
        except ValueError:
            return None
        arrays[f"carry/{name}"] = stacked.reshape(len(values), *values[0].shape)
    return arrays


def _shape(carry: InstrumentCarry) -> tuple[tuple[int, ...], ...]:
    return tuple(value.shape for value in carry)  # arrays, every field (regime_model.carry)


def _own_carry(symbol: Symbol, arrays: dict[str, np.ndarray]) -> InstrumentCarry | None:
    """A carry under per-symbol keys (schema version 3, or a shape before the groups)."""
    names = [f"{symbol}/carry/{name}" for name in InstrumentCarry._fields]
    return InstrumentCarry(*(arrays[n] for n in names)) if all(n in arrays for n in names) else None
