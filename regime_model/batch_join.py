"""Batches that a device runs as one: an account's first batch and the batch of its wide
instruments (update.refresh) differ only in their lanes and chains; several accounts'
warm batches also in their returns and their step schedules.

Every lane's run depends on its own start and stream, the window it reads and its
schedule's step counts alone, so the joined run's lanes are the separate runs' lanes, bit
for bit; only the number of submissions (and, on a GPU, dispatches) changes. A joined
batch keeps each distinct returns window once (its rows offset into their stack) and each
distinct step schedule once (`UpdateBatch.schedule_rows`: a lane's row). Joined batches are
for a device's one-submission run of warm lanes: the host driver pools cold lanes'
metrics by `config.chains` and draws one schedule, which a joined batch does not have, so
`run_together` runs them apart there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Literal, TypeVar

import numpy as np

from regime_model import rng
from regime_model.backend import Backend, ReturnsWindow, UpdateBatch
from regime_model.blocks import lanes_of
from regime_model.sampler import LaneStart, SampleResult, step_counts
from regime_model.types import IntArray

_T = TypeVar("_T")


def _distinct(items: Sequence[_T], same: Callable[[_T, _T], bool]) -> tuple[list[_T], list[int]]:
    """The distinct items, in first-seen order, and each item's index among them."""
    kept: list[_T] = []
    index = []
    for item in items:
        at = next((k for k, seen in enumerate(kept) if same(seen, item)), len(kept))
        if at == len(kept):
            kept.append(item)
        index.append(at)
    return kept, index


def _same_window(a: ReturnsWindow, b: ReturnsWindow) -> bool:
    return a.returns is b.returns or (a.returns.shape == b.returns.shape
                                      and np.array_equal(a.returns, b.returns)
                                      and np.array_equal(a.scale, b.scale))  # fmt: skip


def _same_schedule(a: UpdateBatch, b: UpdateBatch) -> bool:
    return a.schedule_rows is None and b.schedule_rows is None and all(
        np.array_equal(x, z) for x, z in zip(a.schedule, b.schedule, strict=True))  # fmt: skip


def joins(batch: UpdateBatch) -> bool:
    """Whether a batch may be part of a join at all: warm lanes (none re-estimates its
    metric, none starts from a ChEES length) of one update's returns window."""
    start = batch.start
    return batch.window is not None and not start.adapt_mass.any() \
        and start.trajectory_length is None


def join(batches: Sequence[UpdateBatch]) -> UpdateBatch | None:
    """One batch of every lane of `batches`, in order, or None where they differ in more
    than their lanes, returns and step schedules: window length, states, priors, the
    sampler's settings other than chains; or where a lane is cold (its metric adapts) or a
    batch has no returns window."""
    first = batches[0]
    same = first.config._replace(chains=0)
    for b in batches:
        if (not joins(b) or b.y.shape[1] != first.y.shape[1] or b.n_states != first.n_states
                or b.priors != first.priors or b.config._replace(chains=0) != same):  # fmt: skip
            return None
    windows = [b.window for b in batches if b.window is not None]
    held, at = _distinct(windows, _same_window)
    offsets = np.cumsum([0] + [len(w.scale) for w in held])
    rows = np.concatenate([np.repeat(w.instruments() + offsets[k], w.chains)
                           for w, k in zip(windows, at, strict=True)])  # fmt: skip
    returns = held[0].returns if len(held) == 1 else np.concatenate([w.returns for w in held])
    scale = held[0].scale if len(held) == 1 else np.concatenate([w.scale for w in held])
    window = ReturnsWindow(returns, scale, 1, rows)
    start = LaneStart(*(np.concatenate([getattr(b.start, f) for b in batches])
                        for f in LaneStart._fields[:-1]))  # fmt: skip
    stream = rng.Stream(*(np.concatenate([getattr(b.stream, f) for b in batches])
                          for f in rng.Stream._fields))  # fmt: skip
    y = np.concatenate([b.y for b in batches])
    schedules, which = _distinct(list(batches), _same_schedule)
    if len(schedules) == 1:
        return UpdateBatch(y, first.n_states, first.priors, start, stream, first.schedule,
                           first.config, window)  # fmt: skip
    schedule = rng.Stream(*(np.concatenate([getattr(b.schedule, f) for b in schedules])
                            for f in rng.Stream._fields))  # fmt: skip
    ends = np.cumsum([0] + [len(b.schedule.key) for b in schedules])
    lane_rows = np.concatenate([
        ends[k] + (np.zeros(len(b.y), np.int64) if b.schedule_rows is None else b.schedule_rows)
        for b, k in zip(batches, which, strict=True)])  # fmt: skip
    return UpdateBatch(y, first.n_states, first.priors, start, stream, schedule, first.config,
                       window, lane_rows)  # fmt: skip


def schedule_steps(batch: UpdateBatch, iterations: IntArray) -> tuple[IntArray, IntArray]:
    """[G, iterations] the leapfrog steps of each of the batch's step schedules, and [L]
    each lane's row of them (all 0 for one schedule)."""
    schedule, L = batch.schedule, len(batch.y)
    if batch.schedule_rows is None:
        return step_counts(schedule, iterations, batch.config)[None], np.zeros(L, np.int64)
    steps = np.stack([step_counts(rng.Stream(schedule.key[g : g + 1], schedule.high[g : g + 1]),
                                  iterations, batch.config)
                      for g in range(len(schedule.key))])  # fmt: skip
    return steps, np.asarray(batch.schedule_rows, dtype=np.int64)


def joinable(backend: Backend, batches: Sequence[UpdateBatch]) -> UpdateBatch | None:
    """The join of `batches` where `backend` runs it as one device run (`runs_on_device`),
    else None: run them one after another."""
    runs_on_device = getattr(backend, "runs_on_device", None)
    if len(batches) < 2 or runs_on_device is None:
        return None
    joined = join(batches)
    return joined if joined is not None and runs_on_device(joined) else None


def run_together(backend: Backend, batches: Sequence[UpdateBatch]) -> list[SampleResult]:
    """Each batch's run: in one submission where the backend runs their join so (a
    device: `joinable`), else one after another. A joined run's gradient calls and
    timings are reported with its first part, so that summing over the parts counts what
    was done either way (the device server, whose parts are several accounts' updates,
    splits with `split_run(..., "each")`)."""
    joined = joinable(backend, batches)
    if joined is None:
        return [backend.run_update(b) for b in batches]
    return split_run(backend.run_update(joined), batches, "first")


def split_run(
    result: SampleResult, batches: Sequence[UpdateBatch], counted: Literal["first", "each"]
) -> list[SampleResult]:
    """The joined run of `batches` as each batch's run; its gradient calls and timings
    with the first part only ("first": parts of one update) or with every part ("each":
    several accounts' updates, each reporting its own)."""
    ends = np.cumsum([0] + [len(b.y) for b in batches])
    parts = [lanes_of(result, int(lo), int(hi)) for lo, hi in pairwise(ends)]
    if counted == "each":  # lanes_of keeps the joined run's calls (its longest schedule's)
        return parts
    return [parts[0], *(part._replace(gradient_evals=0, timings_ms={}) for part in parts[1:])]
