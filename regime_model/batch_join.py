"""Batches of one update that a device runs as one: the account's first batch and the
batch of its wide instruments (update.refresh) differ only in their lanes and chains.

Every lane's run depends on its own start and stream, the window it reads and the batch's
step counts alone, so the joined run's lanes are the separate runs' lanes, bit for bit;
only the number of submissions changes. Joined batches are for a device's one-submission
run of warm lanes: the host driver pools cold lanes' metrics by `config.chains`, which a
joined batch does not have, so `run_together` runs them apart there.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from regime_model import rng
from regime_model.backend import Backend, ReturnsWindow, UpdateBatch
from regime_model.blocks import lanes_of
from regime_model.sampler import LaneStart, SampleResult


def join(batches: Sequence[UpdateBatch]) -> UpdateBatch | None:
    """One batch of every lane of `batches`, in order, or None where they differ in more
    than their lanes: window length, states, priors, the batch-wide step-count stream,
    the sampler's settings other than chains, the account's returns; or where a lane is
    cold (its metric adapts) or a batch has no returns window."""
    first = batches[0]
    same = first.config._replace(chains=0)
    for b in batches:
        if (b.window is None or first.window is None or b.start.adapt_mass.any()
                or b.y.shape[1] != first.y.shape[1] or b.n_states != first.n_states
                or b.priors != first.priors or b.config._replace(chains=0) != same
                or b.start.trajectory_length is not None
                or not all(np.array_equal(x, z) for x, z in zip(b.schedule, first.schedule,
                                                               strict=True))
                or not np.array_equal(b.window.returns, first.window.returns)):  # fmt: skip
            return None
    rows = np.concatenate([np.repeat(b.window.instruments(), b.window.chains) for b in batches
                           if b.window is not None])  # fmt: skip
    assert first.window is not None
    window = ReturnsWindow(first.window.returns, first.window.scale, 1, rows)
    start = LaneStart(*(np.concatenate([getattr(b.start, f) for b in batches])
                        for f in LaneStart._fields[:-1]))  # fmt: skip
    stream = rng.Stream(*(np.concatenate([getattr(b.stream, f) for b in batches])
                          for f in rng.Stream._fields))  # fmt: skip
    y = np.concatenate([b.y for b in batches])
    return UpdateBatch(y, first.n_states, first.priors, start, stream, first.schedule,
                       first.config, window)  # fmt: skip


def run_together(backend: Backend, batches: Sequence[UpdateBatch]) -> list[SampleResult]:
    """Each batch's run: in one submission where the backend runs their join so (a
    device, `runs_on_device`), else one after another. A joined run's gradient calls and
    timings are reported with its first part, so that summing over the parts counts what
    was done either way."""
    runs_on_device = getattr(backend, "runs_on_device", None)
    joined = join(batches) if len(batches) > 1 and runs_on_device is not None else None
    if joined is None or runs_on_device is None or not runs_on_device(joined):
        return [backend.run_update(b) for b in batches]
    result = backend.run_update(joined)
    ends = np.cumsum([0] + [len(b.y) for b in batches])
    parts = [lanes_of(result, int(lo), int(hi)) for lo, hi in pairwise(ends)]
    return [parts[0], *(part._replace(gradient_evals=0, timings_ms={}) for part in parts[1:])]
