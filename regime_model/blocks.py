"""An update's extension blocks, joined: the chains of successive blocks of the same
instruments as one run, so that a block that runs on adds its draws to the block before
instead of replacing them (the Monte Carlo error falls as the draws add up).

Lanes are instrument-major (lane = instrument x chains + chain); every per-lane field of a
SampleResult is regrouped per instrument and the chains laid side by side.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from regime_model.carry import InstrumentCarry
from regime_model.sampler import SampleResult
from regime_model.types import FloatArray, IntArray, PredictiveBatch

# Per-lane fields ([L, ...]); the predictive is per draw ([L * S, ...], draw-minor);
# shift_rate is per lane where the run made the move, and so is the device's summary
# (each lane its instrument's row) where it made one.
_LANE_FIELDS = ("draws", "divergences", "acceptance", "step_size", "inv_mass", "energy",
                "trajectory_length", "mean_steps")  # fmt: skip
_OPTIONAL_LANE_FIELDS = ("shift_rate", "summary")


def _fields(result: SampleResult) -> tuple[str, ...]:
    present = tuple(f for f in _OPTIONAL_LANE_FIELDS if getattr(result, f) is not None)
    return _LANE_FIELDS + present


def _by_instrument(x: Any, n: int) -> Any:
    """[L, ...] as [n, L / n, ...]."""
    return np.asarray(x).reshape(n, -1, *np.shape(x)[1:])


def _lanes(x: Any) -> Any:
    """[n, C, ...] back to [n * C, ...]."""
    return x.reshape(-1, *x.shape[2:])


def take_instruments(result: SampleResult, rows: IntArray, n: int) -> SampleResult:
    """The lanes of instruments `rows` of a run over `n` instruments."""
    picked = {f: _lanes(_by_instrument(getattr(result, f), n)[rows]) for f in _fields(result)}
    pred = result.predictive
    if pred is not None:
        pred = PredictiveBatch(*(_lanes(_by_instrument(p, n)[rows]) for p in pred))
    return result._replace(**picked, predictive=pred)


def join_chains(a: SampleResult, b: SampleResult, n: int) -> SampleResult:
    """Runs of the same n instruments (and draws per chain) as one run with the chains of
    both, a's first; the evaluation count is the sum."""
    def side_by_side(x: Any, y: Any) -> Any:
        return _lanes(np.concatenate([_by_instrument(x, n), _by_instrument(y, n)], axis=1))

    if (a.shift_rate is None) != (b.shift_rate is None):
        raise ValueError("join_chains: one run made the level-shift move and the other did not")
    # each run's summary is of its own chains alone: the joined chains are summarised anew
    a, b = a._replace(summary=None), b._replace(summary=None)
    joined = {f: side_by_side(getattr(a, f), getattr(b, f)) for f in _fields(a)}
    pred = None
    if a.predictive is not None and b.predictive is not None:
        pred = PredictiveBatch(*(side_by_side(p, q)
                                 for p, q in zip(a.predictive, b.predictive, strict=True)))
    evals = a.gradient_evals + b.gradient_evals
    return a._replace(**joined, predictive=pred, gradient_evals=evals)


def lanes_of(result: SampleResult, lo: int, hi: int) -> SampleResult:
    """The run of lanes [lo, hi) of `result` (a joined run split back: batch_join)."""
    picked: dict[str, Any] = {f: getattr(result, f)[lo:hi] for f in _fields(result)}
    pred = result.predictive
    if pred is not None:
        S = result.draws.shape[1]
        pred = PredictiveBatch(*(p[lo * S : hi * S] for p in pred))
    return result._replace(**picked, predictive=pred)


def extension_start(
    result_draws: FloatArray, carry: InstrumentCarry, chains: int
) -> InstrumentCarry:
    """Where a block starts: `chains` chains at draws [C, S, D] spread evenly over every
    chain's draws (chain-major), with the instrument's step size (the chains' mean) and
    metric."""
    pooled = result_draws.reshape(-1, result_draws.shape[-1])
    picked = np.linspace(0, len(pooled) - 1, chains).round().astype(np.int64)
    step = np.full(chains, float(np.mean(carry.step_size)))
    return InstrumentCarry(pooled[picked].copy(), step, carry.inv_mass.copy())
