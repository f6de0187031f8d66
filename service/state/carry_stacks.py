"""The sampler carries in a checkpoint's model-state blob: stacked by shape, and back.

The largest group of one shape keeps the keys CARRY_ROWS (its instruments' rows in the
book's sorted symbols) and "carry/<field>" [M, ...]; each other shape g the same keys
suffixed, "carry_rows#g" and "carry#g/<field>". An instrument run on between bars starts
its next update with a block's 32 chains, so two shapes are the trial shape's usual case
(28 and 26 of a 54-instrument account in a round, thirty-sixth session), not a model
changed under the state. Carries kept under per-symbol keys "<symbol>/carry/<field>"
(schema version 3, and any shape but the commonest before the groups) still decode.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence

import numpy as np

from regime_model.update import InstrumentCarry
from service.state.codec import stored_forms
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


class StackedAhead:
    """Carries stacked, and their stored forms worked out, before the checkpoint that
    writes them. With [model] sample_between_bars the sampler sets the carries between
    bars, after an update's commit, and the next update's checkpoint writes those very
    objects: stacking and narrowing them there took 0.7 and 0.26 ms of the daemon's
    checkpoint at 268 instruments an account on the dev VM, 1.0 and 0.32 on an H100 host
    (carries of 4 and of 32 chains; thirty-ninth session), on the bar's path. So the
    worker stacks them right after the sampler (`prepare`), and the checkpoint takes those
    stacks (`stack`) where its carries are the objects stacked, in the same order;
    otherwise (a carry set since, an instrument added or gone) it stacks its own, as
    without."""

    def __init__(self) -> None:
        self._carries: list[InstrumentCarry | None] = []
        self._arrays: dict[str, np.ndarray] | None = None
        self.stored: Mapping[str, tuple[np.ndarray, np.ndarray]] = {}  # codec.encode_arrays'

    def prepare(self, carries: Sequence[InstrumentCarry | None]) -> None:
        """Stack `carries` (the instruments' in book order) now, for the next checkpoint."""
        self._carries, self._arrays = list(carries), stack(carries)
        self.stored = stored_forms(self._arrays)

    def stack(self, carries: Sequence[InstrumentCarry | None]) -> dict[str, np.ndarray]:
        """stack(carries): those prepared if they are these very carries, else made now."""
        ahead = self._arrays
        if ahead is not None and len(carries) == len(self._carries) \
                and all(map(operator.is_, carries, self._carries)):  # fmt: skip
            return dict(ahead)
        return stack(carries)


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
