"""One model update for a batch of instruments: the daemon's single entry point.

All N instruments x C chains are lanes of one batched sampler run on the backend; cold
(no carry) and warm instruments mix freely (see `sampler`). Deterministic: the output is a
pure function of the arguments, bit for bit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from regime_model.backend import Backend
from regime_model.batch_join import run_together
from regime_model.batches import build_batch, prior_centre
from regime_model.blocks import extension_start, join_chains, take_instruments
from regime_model.carry import InstrumentCarry, carry_from_arrays, carry_to_arrays
from regime_model.deferred_diagnostics import FIELDS as DIAGNOSTIC_FIELDS
from regime_model.deferred_diagnostics import DeferredDiagnostics, Which
from regime_model.estimate import RegimeEstimate, estimate_of, gather_rows, merge_rows
from regime_model.sampler import SampleResult
from regime_model.scaling import robust_scale
from regime_model.spec import ModelSpec
from regime_model.types import (
    BoolArray,
    FloatArray,
)
from regime_model.width import is_wide, stays_wide, wide_spec

__all__ = [
    "Diagnosis",
    "InstrumentCarry",
    "ModelSpec",
    "RefreshInfo",
    "RegimeEstimate",
    "build_batch",
    "carry_from_arrays",
    "carry_to_arrays",
    "prior_centre",
    "refresh",
    "refresh_then_diagnose",
]

class RefreshInfo(NamedTuple):
    gradient_evals: int  # batched value-and-gradient calls (each covers all N x C lanes)
    timings_ms: dict[str, float]
    extended: int = 0  # instrument-blocks sampled beyond the first (effort follows need)
    # each instrument's draws behind its estimate, [chains x draws, D] chain-major, in the
    # units of its window's robust scale (what regime_model.reweigh reweighs)
    draws: list[FloatArray] | None = None


def needs_more(estimate: RegimeEstimate, spec: ModelSpec) -> BoolArray:
    """[N] the instruments an update runs on: those that fail the gate, and those whose
    window has two readings, where agreeing chains may all sit in one (readings.py)."""
    out: BoolArray = ~estimate.converged | (estimate.shift_acceptance > spec.two_readings)
    return out


class _First(NamedTuple):
    """An update's first run: narrow and wide instruments, in one submission on a device."""

    estimate: RegimeEstimate
    carries: list[InstrumentCarry]
    source: list[FloatArray]  # each instrument's draws [chains, S, D]: where a block starts
    wide: BoolArray  # [N]
    wide_run: SampleResult | None  # the wide instruments' run
    gradient_evals: int
    timings_ms: dict[str, float]
    scales: FloatArray  # robust_scale of the update's returns, for the blocks after


def _first_run(
    returns: FloatArray,
    carries: Sequence[InstrumentCarry | None],
    keys: np.ndarray,
    seq: int,
    seed: int,
    spec: ModelSpec,
    backend: Backend,
    later: DeferredDiagnostics,
    first_block: int = 0,
) -> _First:
    N = len(returns)
    if len(carries) != N or np.shape(keys) != (N,):
        raise ValueError(f"need one carry and one key per instrument: {N} instruments, "
                         f"{len(carries)} carries, keys of shape {np.shape(keys)}")  # fmt: skip
    wide = np.array([is_wide(c, spec) for c in carries], dtype=bool)
    groups = [(rows, s) for rows, s in ((np.flatnonzero(~wide), spec),
                                        (np.flatnonzero(wide), wide_spec(spec))) if len(rows)]
    scales = robust_scale(returns)  # every batch of the update reads the same returns
    built = [build_batch(returns, [carries[int(i)] for i in rows], keys[rows], seq, seed, s,
                         first_block, None if len(rows) == N else rows, scales)
             for rows, s in groups]  # fmt: skip
    results = run_together(backend, [batch for batch, _ in built])
    t0 = time.perf_counter()
    parts = []
    new: list[Any] = [None] * N  # every row is set below
    source: list[FloatArray] = [np.empty(0)] * N
    for (rows, s), (batch, scale), result in zip(groups, built, results, strict=True):
        estimate, carried, decision = estimate_of(result, batch.y, scale, s, backend,
                                                  diagnose=False)  # fmt: skip
        later.note(rows, result, decision, s)
        parts.append((estimate, rows))
        draws = result.draws.reshape(len(rows), s.chains, s.draws, -1)
        for j, i in enumerate(rows):
            new[i], source[i] = carried[j], draws[j]
    timings: dict[str, float] = {}
    for result in results:  # the parts' run times: one after another, or the joined run's
        for name, ms in result.timings_ms.items():
            timings[name] = timings.get(name, 0.0) + ms
    timings["summary"] = 1e3 * (time.perf_counter() - t0)
    wide_run = results[-1] if wide.any() else None
    evals = sum(result.gradient_evals for result in results)
    return _First(gather_rows(parts, N), new, source, wide, wide_run, evals, timings, scales)


def refresh(
    returns: np.ndarray,
    carries: Sequence[InstrumentCarry | None],
    instrument_keys: np.ndarray,
    seq: int,
    seed: int,
    spec: ModelSpec,
    backend: Backend,
    diagnose: Which = "all",
    first_block: int = 0,
) -> tuple[RegimeEstimate, list[InstrumentCarry], RefreshInfo]:
    """Refresh every instrument's posterior in one batch; carries[i] None = cold start.
    `first_block` > 0 gives the run the random streams of the update's blocks from that
    one on: a second run of an update's instruments from the carries its first left.

    Effort follows need: an instrument that `needs_more` runs on, up to `spec.extend_max`
    blocks, in a batch of just those instruments: `spec.extension_chains` chains started at
    its draws (extension_start), `spec.extension_warmup` iterations of step-size
    re-adaptation, then `spec.draws` draws. Its estimate is the blocks' chains together
    (blocks.join_chains: a second block adds to the first), its carry its last block's
    chains, so that its next update starts wide (regime_model.width: beside the first
    batch, in its submission on a device); a wide instrument runs on only if it fails the
    gate, and narrows back once it would pass narrow. The rest stop after the first run.

    The diagnostics the gate does not read (R-hat, the parameters' ESS: deferred_diagnostics)
    are of every instrument; with `diagnose` "failing" only of those that fail the gate,
    all the daemon reads of them; with "none" of none (the others NaN).
    """
    estimate, carries_out, info, diagnosis = refresh_then_diagnose(
        returns, carries, instrument_keys, seq, seed, spec, backend, diagnose, first_block)
    t0 = time.perf_counter()
    with diagnosis:
        estimate = diagnosis.wait()
    info.timings_ms["diagnostics"] = 1e3 * (time.perf_counter() - t0)
    return estimate, carries_out, info


class Diagnosis:
    """The diagnostics an update's estimate still lacks, computing on threads: `wait()`
    gives the estimate with them. A context: its exit stops the threads, waited on or not
    (an update that fails after its model stage leaves none behind)."""

    def __init__(
        self, later: DeferredDiagnostics, estimate: RegimeEstimate,
        into: tuple[RegimeEstimate, np.ndarray] | None = None,
    ) -> None:
        self._later, self._estimate, self._into = later, estimate, into
        self.waited: RegimeEstimate | None = None  # what wait() gave, once it has

    @classmethod
    def done(cls, estimate: RegimeEstimate) -> Diagnosis:
        """An estimate whose diagnostics are all in already."""
        return cls(DeferredDiagnostics(len(estimate.converged), which="none"), estimate)

    def into(self, base: RegimeEstimate, rows: np.ndarray) -> Diagnosis:
        """This diagnosis as rows `rows` of `base` (its diagnostics into those rows, the
        rest of base as it is): an estimate whose other rows are done."""
        return Diagnosis(self._later, self._estimate, (base, rows))

    def __enter__(self) -> Diagnosis:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._later.__exit__(None, None, None)

    def wait(self) -> RegimeEstimate:
        """The estimate with every diagnosed instrument's diagnostics."""
        out = self._later.diagnose(self._estimate)
        if self._into is not None:
            base, rows = self._into  # only the diagnostics go into base's rows
            fields = {f: np.array(getattr(base, f), copy=True) for f in DIAGNOSTIC_FIELDS}
            for f, values in fields.items():
                values[rows] = getattr(out, f)
            out = base._replace(**fields)
        self.waited = out
        return out


def refresh_then_diagnose(
    returns: np.ndarray,
    carries: Sequence[InstrumentCarry | None],
    instrument_keys: np.ndarray,
    seq: int,
    seed: int,
    spec: ModelSpec,
    backend: Backend,
    diagnose: Which = "all",
    first_block: int = 0,
) -> tuple[RegimeEstimate, list[InstrumentCarry], RefreshInfo, Diagnosis]:
    """`refresh`, returning before the diagnostics the gate does not read are in: the
    estimate's gate, regime probabilities and predictive are final, its rhat, ess_bulk,
    ess_tail and rhat_decision NaN until `Diagnosis.wait()`. The daemon commits and sends
    its orders first: the diagnostics feed only `model.unconverged`."""
    returns = np.asarray(returns, dtype=np.float64)
    keys = np.asarray(instrument_keys)
    later = DeferredDiagnostics(len(returns), which=diagnose)
    try:
        estimate, carries_out, info = _refresh(returns, carries, keys, seq, seed, spec,
                                               backend, later, first_block)  # fmt: skip
    except BaseException:
        later.__exit__(None, None, None)
        raise
    return estimate, carries_out, info, Diagnosis(later, estimate)


def _refresh(
    returns: FloatArray,
    carries: Sequence[InstrumentCarry | None],
    keys: np.ndarray,
    seq: int,
    seed: int,
    spec: ModelSpec,
    backend: Backend,
    later: DeferredDiagnostics,
    first_block: int = 0,
) -> tuple[RegimeEstimate, list[InstrumentCarry], RefreshInfo]:
    first = _first_run(returns, carries, keys, seq, seed, spec, backend, later, first_block)
    estimate, new, source, wide = first.estimate, first.carries, first.source, first.wide
    final = [d.reshape(-1, d.shape[-1]) for d in source]  # the blocks' chains, joined
    timings = first.timings_ms
    t0 = time.perf_counter()
    evals, extended = first.gradient_evals, 0
    more = wide_spec(spec)
    E, ran_on = more.chains, np.zeros(len(returns), dtype=bool)
    # Instruments grouped by what they ran last: (rows, that run, its chains). A block's
    # chains join its group's run (blocks.join_chains), except a narrow first batch's.
    runs = [(np.flatnonzero(~wide), None, 0), (np.flatnonzero(wide), first.wide_run, E)]
    for block in range(1, spec.extend_max + 1):
        go = ((needs_more(estimate, spec) & ~wide) | ~estimate.converged) if block == 1 \
            else ~estimate.converged
        parts = [(rows[go[rows]], rows, run, c) for rows, run, c in runs if go[rows].any()]
        if not parts:
            break
        running = np.concatenate([r for r, *_ in parts])
        later.settle(np.setdiff1d(np.arange(len(returns)), running), estimate.converged)
        built = [build_batch(returns, [extension_start(source[i], new[i], E) for i in r],
                             keys[r], seq, seed, more, first_block + block, r, first.scales)
                 for r, *_ in parts]  # fmt: skip
        results = run_together(backend, [batch for batch, _ in built])  # one device run
        runs = []
        for (r, rows, run, c), (batch, scale), result in zip(parts, built, results, strict=True):
            joined, chains = result, E
            if run is not None:  # add this block's chains to the group's last run
                earlier = take_instruments(run, np.searchsorted(rows, r), len(rows))
                joined, chains = join_chains(result, earlier, len(r)), E + c
            runs.append((r, joined, chains))
            y = np.repeat(batch.y[::E], chains, axis=0)
            group = replace(more, chains=chains, extension_chains=chains)
            ext_estimate, ext_new, decision = estimate_of(joined, y, scale, group, backend,
                                                          diagnose=False)  # fmt: skip
            later.note(r, joined, decision, group)
            estimate = merge_rows(estimate, ext_estimate, r)
            draws = result.draws.reshape(len(r), E, more.draws, -1)
            every = joined.draws.reshape(len(r), -1, joined.draws.shape[-1])
            for j, (i, carry) in enumerate(zip(r, ext_new, strict=True)):
                final[i] = every[j]
                # the carry keeps the last block's chains (join_chains puts them first)
                new[i] = InstrumentCarry(carry.position[:E], carry.step_size[:E], carry.inv_mass)
                source[i] = draws[j]
            ran_on[r] = True
            extended += len(r)
        evals += sum(result.gradient_evals for result in results)
    C = spec.chains
    for i in np.flatnonzero(wide & ~ran_on & ~stays_wide(estimate, spec)):
        new[i] = InstrumentCarry(new[i].position[:C], new[i].step_size[:C], new[i].inv_mass)
    if extended:
        timings["extension"] = 1e3 * (time.perf_counter() - t0)
    later.settle(np.arange(len(returns)), np.asarray(estimate.converged, dtype=bool))
    return estimate, new, RefreshInfo(evals, timings, extended, final)
