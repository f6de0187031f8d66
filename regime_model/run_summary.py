"""A run's summary computed where its draws are: what a device may return with a run.

estimate.estimate_of reduces a run's draws to what the gate and the strategy read: per
instrument the posterior means of P(regime) and of the predictive, the spread and bulk
ESS of the two decision quantities, and the draws' variance (the next metric). At 268
instruments that was 15-26 ms of host work per update on the H200, longer than the device
run itself (docs/benchmarks.md, twenty-third session). A device that has the draws in its memory can
return these few numbers per instrument instead (SampleResult.summary); the host keeps
only what is cheap. The numpy backend never does: its runs are summarised by
estimate.estimate_of itself, which stays the reference.

The layout is the model's, the backend's promise: one row per lane, the row of the lane's
instrument over all of its chains' draws in that run, its columns RunSummary's fields in
order (`from_rows`; `width` of them). A row of NaN means the device did not summarise
that instrument (more pooled draws than it sorts): estimate_of then summarises the run on
the host.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from regime_model.types import FloatArray


class RunSummary(NamedTuple):
    """Per instrument [N, ...], from the rows of its lanes."""

    regime_probs: FloatArray  # [N, K] mean over draws of P(regime at the last bar)
    pred_mean: FloatArray  # [N] mean over draws of the next (scaled) return's mean
    pred_second: FloatArray  # [N] mean over draws of its variance + mean^2 (total variance)
    spread: FloatArray  # [N, 2] sd (ddof 0) of P(most turbulent regime), log predictive sd
    ess: FloatArray  # [N, 2] their rank-normalised split bulk ESS (diagnostics.bulk_ess)
    draw_var: FloatArray  # [N, D] the parameters' variance over the draws (ddof 1)


def width(K: int, D: int) -> int:
    """Columns of a summary row for K states and D parameters."""
    return K + 6 + D


def from_rows(rows: FloatArray, K: int) -> RunSummary:
    """One row per instrument [N, width] as a RunSummary."""
    return RunSummary(rows[:, :K], rows[:, K], rows[:, K + 1], rows[:, K + 2 : K + 4],
                      rows[:, K + 4 : K + 6], rows[:, K + 6 :])  # fmt: skip


def usable(summary: FloatArray | None, chains: int, K: int) -> RunSummary | None:
    """The run's summary per instrument of `chains` lanes, or None where there is none or
    the device left an instrument out."""
    if summary is None:
        return None
    rows = summary[::chains]
    if np.isnan(rows).any():
        return None
    return from_rows(rows, K)
