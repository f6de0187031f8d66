"""A served run's result in fewer bytes between the device process and a worker.

A device run's draws and per-draw predictive are float32 values widened to float64
(wgpu_sampler.sample_result), so they travel as float32 and are widened again on
arrival: the same bits, 7.6 MB instead of 13.7 for a trial-shape gathering's 3,800 lanes,
which on the dev VM passed through a pipe in a median 21-32 ms against 41-55
(docs/bench-results/reply_transfer.py; docs/benchmarks.md, twenty-fifth session). An
array that is not float32-valued (a run the host driver made) travels as it is.
"""

from __future__ import annotations

import numpy as np

from regime_model.sampler import SampleResult
from regime_model.types import FloatArray, PredictiveBatch


def _narrow(values: FloatArray) -> np.ndarray:
    narrowed = values.astype(np.float32)
    return narrowed if np.array_equal(narrowed, values) else values


def compact(result: SampleResult) -> SampleResult:
    """`result` with its draws and predictive as float32 where that loses nothing."""
    pred = result.predictive
    return result._replace(
        draws=_narrow(result.draws),
        predictive=None if pred is None else PredictiveBatch(*(_narrow(p) for p in pred)),
    )


def expand(result: SampleResult) -> SampleResult:
    """The float64 result `compact` was made from, bit for bit."""
    pred = result.predictive
    return result._replace(
        draws=np.asarray(result.draws, dtype=np.float64),
        predictive=None
        if pred is None
        else PredictiveBatch(*(np.asarray(p, dtype=np.float64) for p in pred)),
    )
