"""`[model] sample_between_bars`: an update's MCMC after its commit, the bar's estimate by
reweighting the draws it left (regime_model.reweigh).

At bar n the worker reweighs each instrument's last sample (its draws on window n-1) to
window n, and samples at the bar only the instruments reweighting cannot serve (no sample
yet, a window not moved by whole bars, weights that keep too few draws, a gate the
reweighted draws fail). It commits and sends its orders, then samples window n from the
carries it committed: the update's MCMC, `refresh` as ever (the same seq, seed and
carries), now between bars. The chains' carries after it are committed with bar n+1's
checkpoint. A worker restarted between bars samples the committed window again before
its next bar (`Trader.update`): the same inputs, the same bits, so a resumed worker's
estimates are those it would have made (tests/service/test_between_bars.py).

The sampler between bars runs on until its Monte Carlo errors are within
`[model] between_bars_margin` of the gate, so that reweighting seldom pushes an
instrument over the gate; its estimate is judged by the gate itself. The bar's sampler
stops at the gate, so with a margin below 1 the instruments it ran are sampled again
between bars (from the same carries: the bar's run is where theirs starts); at 1 the
bar's run is their sample, as an instrument's refresh does not depend on its batch.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import NamedTuple

import numpy as np
import structlog

from gpu_backend.backend_traffic import take_traffic
from regime_model.at_risk import AFTER_COLD_BLOCK, Risk, at_risk, run_on_spec
from regime_model.backend import Backend
from regime_model.estimate import (
    RegimeEstimate,
    decision_mcse,
    gather_rows,
    merge_rows,
    passes_gate,
    take_rows,
)
from regime_model.reweigh import WHY, reweigh
from regime_model.sample import Sample, sample_of
from regime_model.spec import ModelSpec
from regime_model.types import FloatArray
from regime_model.update import (
    Diagnosis,
    InstrumentCarry,
    RefreshInfo,
    refresh,
    refresh_then_diagnose,
)
from service.model_state import ModelState
from service.state.store import Checkpoint
from service.types import Symbol
from service.worker.update_inputs import STAMP_KEY, UpdateInputs, inputs_of

log = structlog.get_logger("service.worker")


def between_bars_on(setting: bool | str) -> bool:
    """[model] sample_between_bars: "auto", its default until the thirty-third session (on
    where the model ran on a CPU), now means on: on the H200 too, the trial round between
    bars took 56-60 ms at the median against 76-77 at the bar (docs/benchmarks.md)."""
    return setting == "auto" or setting is True


class _Kept(NamedTuple):
    """One instrument's last sample: the update whose window it sampled, and its row of
    that update's Sample (its filters joined: Sample.joined)."""

    seq: int
    sample: Sample
    row: int

    @property
    def returns(self) -> FloatArray:  # [T] the window it sampled
        window: FloatArray = self.sample.returns[self.row]
        return window

    @property
    def draws(self) -> FloatArray:  # [M, D]
        return self.sample.draws[self.row]

    @property
    def estimate(self) -> RegimeEstimate:  # one row
        return take_rows(self.sample.estimate, np.array([self.row]))


class _AtBar(NamedTuple):
    """The instruments the bar sampled: rows of the update, their run, and the update's
    diagnosis, whose wait (the worker's, for model.unconverged) gives their diagnostics."""

    rows: np.ndarray
    estimate: RegimeEstimate
    carries: list[InstrumentCarry]
    draws: list[FloatArray]
    diagnosis: Diagnosis

    def diagnosed(self) -> RegimeEstimate:
        """Their estimate with the diagnostics the update waited for; as it was at the
        commit if it did not wait (it failed first)."""
        waited = self.diagnosis.waited
        return self.estimate if waited is None else take_rows(waited, self.rows)


class BetweenBars:
    def __init__(self, spec: ModelSpec, backend: Backend) -> None:
        self.spec, self.backend = spec, backend
        # The sampler between bars runs on to spec.between_bars_margin of the gate; the bar's
        # sampler, for the instruments sent there, to the gate itself (it is on the path);
        # an instrument at risk of the next bar's gate, to its share (regime_model.at_risk)
        self.sampling = spec.within(spec.between_bars_margin)
        self.kept: dict[Symbol, _Kept] = {}
        self.pending: UpdateInputs | None = None  # an update whose window is not sampled yet
        self._at_bar: _AtBar | None = None

    def estimate(
        self, inputs: UpdateInputs
    ) -> tuple[RegimeEstimate, dict[str, float], Diagnosis]:
        """The bar's estimate of `inputs`' instruments, its model figures, and the
        diagnosis of those sampled at the bar. Carries are not touched: sample_after
        advances them, after the commit."""
        t0 = time.perf_counter()
        N = len(inputs.symbols)
        known = [s for s in inputs.symbols if s in self.kept]
        base: RegimeEstimate | None = None
        at, share, why = np.arange(N), np.empty(0), {"no_draws": N}
        if known:
            index = {s: i for i, s in enumerate(known)}
            rows = np.array([index.get(s, -1) for s in inputs.symbols])
            done = reweigh(self._sample_of(known), rows, inputs.returns, self.spec, self.backend)
            base, at, share, why = done.estimate, np.flatnonzero(done.at_bar), done.share, done.why
            share = share[np.isfinite(share) & ~done.at_bar]
        figures = {"reweighed": float(N - len(at)), "sampled_at_bar": float(len(at)),
                   "min_share": float(share.min()) if len(share) else float("nan"),
                   "reweigh": 1e3 * (time.perf_counter() - t0),
                   **{f"at_bar_{k}": float(why.get(k, 0)) for k in WHY}}  # fmt: skip
        self.pending, self._at_bar = inputs, None
        if not len(at) and base is not None:
            return base, figures, Diagnosis.done(base)
        estimate, carries, info, diagnosis = refresh_then_diagnose(
            inputs.returns[at], [inputs.carries[i] for i in at], inputs.keys[at], inputs.seq,
            inputs.seed, self.spec, self.backend, diagnose="failing")  # fmt: skip
        figures.update({"gradient_evals": float(info.gradient_evals),
                        "extended": float(info.extended), **info.timings_ms})  # fmt: skip
        if base is not None:
            estimate = merge_rows(base, estimate, at)
            diagnosis = diagnosis.into(estimate, at)
        self._at_bar = _AtBar(at, take_rows(estimate, at), carries, info.draws or [], diagnosis)
        return estimate, figures, diagnosis

    def sources(self, symbols: list[Symbol]) -> dict[str, list[int]]:
        """For an update of `symbols`: the updates whose samples it reweighs (their seq,
        as text for JSON), each with the rows of `symbols` it serves. In the update's stamp,
        so that replay reweighs the same samples (a rotation's slices keep theirs across
        other slices' updates; a restart keeps only its last update's)."""
        out: dict[str, list[int]] = {}
        for row, symbol in enumerate(symbols):
            if symbol in self.kept:
                out.setdefault(str(self.kept[symbol].seq), []).append(row)
        return out

    def resume(self, checkpoint: Checkpoint, book: ModelState, seed: int) -> None:
        """After a restart: the checkpoint's update left its window to sample (its carries
        are those it started from), if it ran in this mode and its inputs are as stamped."""
        stamp = checkpoint.book.get(STAMP_KEY) or {}
        modelled = [s for s in stamp.get("modelled", []) if s in book.instruments]
        if not stamp.get("between_bars") or not modelled:
            return
        inputs = inputs_of(book, modelled, checkpoint.seq, seed)
        if inputs.digest() == stamp.get("inputs_digest"):
            self.take(inputs)

    def take(self, inputs: UpdateInputs) -> None:
        """A committed update whose window `sample_after` is to sample (`resume`, and
        replay, which rebuilds an update's draws as a restarted worker does)."""
        self.pending, self._at_bar = inputs, None

    def sample_after(
        self, traded: Collection[Symbol], waited_s: float = 0.0
    ) -> list[tuple[Symbol, InstrumentCarry]]:
        """Sample the pending update's window (its MCMC, between bars): the carry of each
        of its instruments still `traded`, for the next checkpoint; none if no update is
        pending. The samples of instruments no longer traded are dropped. `waited_s`: how
        long it waited for the other accounts' bars (service/worker/sampler_turn.py)."""
        for symbol in set(self.kept) - set(traded):
            del self.kept[symbol]
        inputs, at_bar = self.pending, self._at_bar
        if inputs is None:
            return []
        t0 = time.perf_counter()
        N = len(inputs.symbols)
        if self.spec.between_bars_margin < 1:  # the bar's run stopped at the gate: run on here
            at_bar = None
        rest = np.setdiff1d(np.arange(N), at_bar.rows if at_bar else [])
        parts: list[tuple[RegimeEstimate, np.ndarray]] = []
        carries: list[InstrumentCarry | None] = [None] * N
        draws: list[FloatArray] = [np.empty(0)] * N
        evals = extended = 0
        if len(rest):
            estimate, ran, info = refresh(
                inputs.returns[rest], [inputs.carries[i] for i in rest], inputs.keys[rest],
                inputs.seq, inputs.seed, self.sampling, self.backend,
                diagnose="failing")  # fmt: skip
            parts.append((self._judged(estimate, info.draws or []), rest))
            evals, extended = info.gradient_evals, info.extended
            for j, i in enumerate(rest):
                carries[i], draws[i] = ran[j], (info.draws or [])[j]
        if at_bar is not None:
            parts.append((at_bar.diagnosed(), at_bar.rows))
            for j, i in enumerate(at_bar.rows):
                carries[i], draws[i] = at_bar.carries[j], at_bar.draws[j]
        estimate = gather_rows(parts, N)
        sample = sample_of(inputs.returns, estimate, draws, self.spec, self.backend)
        risk = Risk(np.empty(0, dtype=np.int64), np.empty(0))
        if self.spec.between_bars_margin > self.spec.at_risk_margin:
            risk = at_risk(sample, self.spec, self.backend)
        # An instrument whose update started cold runs on from the carries its run left:
        # run again from none, it would be a cold run (after a cold round the sampler then
        # overran the trial shape's next bar: docs/benchmarks.md, thirty-fifth session)
        cold = np.array([c is None for c in inputs.carries], dtype=bool)
        for after_cold in (False, True):
            for margin, risky in risk.only(cold == after_cold).groups():
                sample, info = self._run_on(inputs, risky, margin, sample, carries, after_cold)
                estimate = sample.estimate
                evals, extended = evals + info.gradient_evals, extended + info.extended
        sample = sample.joined()
        for k, symbol in enumerate(inputs.symbols):
            self.kept[symbol] = _Kept(inputs.seq, sample, k)
        self.pending, self._at_bar = None, None
        log.info("model.sampled", seq=inputs.seq, instruments=N, sampled=len(rest),
                 from_the_bar=N - len(rest), at_risk=len(risk.rows),
                 at_risk_margins={str(m): len(r) for m, r in risk.groups()},
                 gradient_evals=evals, extended=extended,
                 duration_ms=round(1e3 * (time.perf_counter() - t0), 3),
                 waited_ms=round(1e3 * waited_s, 3),
                 device=take_traffic(self.backend)._asdict())  # fmt: skip
        return [(s, c) for s, c in zip(inputs.symbols, carries, strict=True)
                if c is not None and s in traded]  # fmt: skip

    def _run_on(
        self, inputs: UpdateInputs, risky: np.ndarray, margin: float, sample: Sample,
        carries: list[InstrumentCarry | None], after_cold: bool,
    ) -> tuple[Sample, RefreshInfo]:
        """The instruments `risky` (regime_model.at_risk) sampled again from the same
        carries, on to `margin` of the gate: their runs begin as the ones they replace (the
        same seeds) and run on from there; `after_cold`, those of a cold start, from the
        carries their run left, with streams of their own (AFTER_COLD_BLOCK). Their carries
        replace the others' in `carries`; the sample with their draws in it."""
        starts = [carries[i] if after_cold else inputs.carries[i] for i in risky]
        estimate, ran, info = refresh(
            inputs.returns[risky], starts, inputs.keys[risky], inputs.seq, inputs.seed,
            run_on_spec(self.spec, margin), self.backend, diagnose="failing",
            first_block=AFTER_COLD_BLOCK if after_cold else 0)  # fmt: skip
        estimate = self._by_gate(estimate, info.draws or [])
        for j, i in enumerate(risky):
            carries[i] = ran[j]
        part = sample_of(inputs.returns[risky], estimate, info.draws or [], self.spec,
                         self.backend)  # fmt: skip
        return sample.with_rows(risky, part), info

    def _judged(self, estimate: RegimeEstimate, draws: list[FloatArray]) -> RegimeEstimate:
        """The sample's estimate with `converged` by the gate itself, not the margin's: the
        bar sends an instrument to its sampler where the reweighted draws fail the gate
        that the sample passed (regime_model.reweigh). At a margin of 1 that is the
        sampler's own verdict."""
        if self.spec.between_bars_margin >= 1:
            return estimate
        return self._by_gate(estimate, draws)

    def _by_gate(self, estimate: RegimeEstimate, draws: list[FloatArray]) -> RegimeEstimate:
        """`converged` by the gate itself, for a run to a margin below it."""
        chains = np.array([len(d) for d in draws]) // self.spec.draws
        return estimate._replace(converged=passes_gate(
            decision_mcse(estimate), np.asarray(estimate.divergences), chains, self.spec))

    def _sample_of(self, symbols: list[Symbol]) -> Sample:
        """The kept samples of `symbols`, in that order: one update's Sample as the sampler
        left it where they are its instruments in its order (every bar but a rotation's:
        no copies on the bar's path), else gathered row by row."""
        kept = [self.kept[s] for s in symbols]
        whole = kept[0].sample
        if all(k.sample is whole for k in kept) and \
                [k.row for k in kept] == list(range(len(whole.draws))):  # fmt: skip
            return whole
        by_sample: dict[int, list[int]] = {}  # positions in `symbols`, by the Sample they are in
        for i, k in enumerate(kept):
            by_sample.setdefault(id(k.sample), []).append(i)
        estimate = gather_rows([(take_rows(kept[at[0]].sample.estimate,
                                           np.array([kept[i].row for i in at])), np.array(at))
                                for at in by_sample.values()], len(kept))  # fmt: skip
        return Sample(np.stack([k.returns for k in kept]), [k.draws for k in kept],
                      [k.sample.log_density[k.row] for k in kept], estimate,
                      np.stack([k.sample.ess[k.row] for k in kept]),
                      [k.sample.ahead[k.row] for k in kept])  # fmt: skip
