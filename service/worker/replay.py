"""Recompute one committed update from the checkpoint before it, and compare decisions.

Update N read the carries that checkpoint N-1 holds and the return windows that
checkpoint N holds (the new bars are appended before the model runs, and nothing changes
the windows after it); its checkpoint's book names the modelled instruments, the code
version and a digest of every input (update_inputs.py). Replay rebuilds those inputs,
checks the digest, runs `refresh` on the chosen backend, and compares each decision: on
numpy float64 the answer must be bit-identical; on a GPU (float32) within the identity
tolerance.

An update made with [model] sample_between_bars reweighed the draws that the sampler left
on earlier updates' windows after their commits (its stamp names them: update N-1's, and
in a rotation other slices' before it), and its carries are committed one bar later
(checkpoint N holds those it started from): replay samples those windows again from their
checkpoints, as a worker restarted between bars does its last, then the bar's reweighing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from regime_model.backend import Backend
from regime_model.estimate import RegimeEstimate
from regime_model.spec import ModelSpec
from regime_model.update import refresh
from service.config_loader import LoadedConfig
from service.state.checkpoint_codec import checkpoint_state
from service.state.store import StateStore
from service.types import Symbol
from service.worker.between_bars import BetweenBars
from service.worker.update_inputs import STAMP_KEY, UpdateInputs, inputs_of, model_spec

GPU_TOLERANCE = 1e-3  # P(turbulent) and the predictive, float32 against float64 (verify-gpu)


class ReplayError(Exception):
    """The update cannot be recomputed from what the database holds (said why)."""


Samples = list[tuple[UpdateInputs, list[Symbol]]]


def _inputs(
    store: StateStore, seq: int, seed: int
) -> tuple[UpdateInputs, Samples | None, dict[str, Any]]:
    """Update `seq`'s inputs and, for an update made between bars, the samples it
    reweighed: each sampled update's inputs with the instruments it served."""
    before, at = store.checkpoint(seq - 1), store.checkpoint(seq)
    if at is None or before is None:
        missing = seq if at is None else seq - 1
        needs = f"replay of update {seq} needs checkpoints {seq - 1} and {seq}"
        raise ReplayError(f"{store.path}: no checkpoint {missing}; {needs}")
    stamp = at.book.get(STAMP_KEY)
    if not stamp:
        raise ReplayError(f"checkpoint {seq} carries no inputs stamp (written by an older release)")
    previous, now = checkpoint_state(store, before), checkpoint_state(store, at)
    modelled, samples = list(stamp["modelled"]), None
    if stamp.get("between_bars"):  # checkpoint N's carries are those update N started from
        samples = _samples(store, stamp, seq, seed)
    else:  # windows as update N saw them (checkpoint N), carries as it started (N-1)
        for symbol in modelled:
            now.instruments[symbol].carry = (
                previous.instruments[symbol].carry if symbol in previous.instruments else None
            )
    inputs = inputs_of(now, modelled, seq, seed)
    if inputs.digest() != stamp["inputs_digest"]:
        raise ReplayError(
            f"the inputs rebuilt for update {seq} do not match its stamp (a carry set between "
            "the two checkpoints, e.g. a cold warm-up finishing, or another seed): not replayable"
        )
    meta = {"recorded": {"backend": at.backend, "adapter": at.adapter, "numerics": at.numerics,
                         "code_version": stamp.get("code_version"),
                         "config_hash": at.config_hash,
                         "between_bars": bool(stamp.get("between_bars"))}}  # fmt: skip
    return inputs, samples, meta


def _samples(store: StateStore, stamp: dict[str, Any], seq: int, seed: int) -> Samples:
    """The samples a between-bars update reweighed (its stamp's `samples`: each sampled
    update's seq and the rows it served), each update's inputs rebuilt from its checkpoint
    and checked against that update's own stamp."""
    if "samples" not in stamp:
        raise ReplayError(f"update {seq} ran with [model] sample_between_bars before its "
                          "checkpoint recorded which samples it reweighed: not replayable")
    out: Samples = []
    for k, rows in sorted((int(k), rows) for k, rows in stamp["samples"].items()):
        sampled = store.checkpoint(k)
        own = (sampled.book.get(STAMP_KEY) or {}) if sampled is not None else {}
        inputs = None
        if sampled is not None and own.get("between_bars"):
            inputs = inputs_of(checkpoint_state(store, sampled), list(own["modelled"]), k, seed)
        if inputs is None or inputs.digest() != own.get("inputs_digest"):
            raise ReplayError(
                f"update {seq} reweighed the draws sampled on update {k}'s window, whose "
                f"inputs cannot be rebuilt from checkpoint {k} (missing, or not matching "
                "its stamp): not replayable")
        out.append((inputs, [stamp["modelled"][r] for r in rows]))
    return out


def _estimate(
    inputs: UpdateInputs, samples: Samples | None, spec: ModelSpec, backend: Backend
) -> RegimeEstimate:
    """The update's estimate as the worker made it: `refresh`, or between bars the
    samples it reweighed, taken again as a restarted worker takes its last one
    (service/worker/between_bars.py), reweighed to this window."""
    if samples is None:
        estimate, _, _ = refresh(inputs.returns, inputs.carries, inputs.keys, inputs.seq,
                                 inputs.seed, spec, backend)  # fmt: skip
        return estimate
    worker = BetweenBars(spec, backend)
    kept = {}
    for sampled, symbols in samples:
        worker.take(sampled)
        worker.sample_after(sampled.symbols)
        kept.update({s: worker.kept[s] for s in symbols})
    worker.kept = kept
    estimate, _, diagnosis = worker.estimate(inputs)
    with diagnosis:  # the decisions do not wait for the deferred diagnostics
        return estimate


def replay_update(
    database: Path, config: LoadedConfig, seq: int, backend: Backend
) -> dict[str, Any]:
    """The comparison as one JSON-ready object; `identical` says whether it holds."""
    store = StateStore(database)
    try:
        inputs, samples, meta = _inputs(store, seq, config.settings.model.seed)
        recorded = {d.symbol: d for d in store.decisions(seq)}
    finally:
        store.close()
    report: dict[str, Any] = {"seq": seq, **meta, "replayed": {
        "backend": backend.name, "adapter": backend.adapter, "numerics": backend.numerics},
        "config_hash": config.config_hash, "instruments": len(inputs.symbols)}  # fmt: skip
    if not inputs.symbols:
        return {**report, "identical": True, "max_abs_diff": 0.0, "mismatches": []}
    estimate = _estimate(inputs, samples, model_spec(config.settings.model), backend)
    exact = backend.numerics == "float64" and meta["recorded"]["numerics"] == "float64"
    tolerance = 0.0 if exact else GPU_TOLERANCE
    worst, mismatches = 0.0, []
    for i, symbol in enumerate(inputs.symbols):
        d = recorded[symbol]
        got = (float(estimate.regime_probs[i, -1]), float(estimate.pred_mean[i]),
               float(estimate.pred_vol[i]))  # fmt: skip
        diff = max(abs(a - b) for a, b in zip(got, (d.p_turbulent, d.pred_mean, d.pred_vol),
                                               strict=True))  # fmt: skip
        worst = max(worst, diff)
        same_gate = bool(estimate.converged[i]) == d.converged
        same_regime = int(np.argmax(estimate.regime_probs[i])) == d.regime
        if diff > tolerance or not same_gate or not same_regime:
            mismatches.append({"symbol": symbol, "recorded": [d.p_turbulent, d.pred_mean,
                               d.pred_vol, d.converged], "replayed": [*got,
                               bool(estimate.converged[i])]})  # fmt: skip
    return {**report, "identical": not mismatches, "bit_exact_required": exact,
            "max_abs_diff": worst, "mismatches": mismatches}
