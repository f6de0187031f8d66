"""Recompute one committed update from the checkpoint before it, and compare decisions.

Update N read the carries that checkpoint N-1 holds and the return windows that
checkpoint N holds (the new bars are appended before the model runs, and nothing changes
the windows after it); its checkpoint's book names the modelled instruments, the code
version and a digest of every input (update_inputs.py). Replay rebuilds those inputs,
checks the digest, runs `refresh` on the chosen backend, and compares each decision: on
numpy float64 the answer must be bit-identical; on a GPU (float32) within the identity
tolerance.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from regime_model.backend import Backend
from regime_model.update import refresh
from service.config_loader import LoadedConfig
from service.state.checkpoint_codec import checkpoint_state
from service.state.store import StateStore
from service.worker.update_inputs import STAMP_KEY, UpdateInputs, inputs_of, model_spec

GPU_TOLERANCE = 1e-3  # P(turbulent) and the predictive, float32 against float64 (verify-gpu)


class ReplayError(Exception):
    """The update cannot be recomputed from what the database holds (said why)."""


def _inputs(store: StateStore, seq: int, seed: int) -> tuple[UpdateInputs, dict[str, Any]]:
    before, at = store.checkpoint(seq - 1), store.checkpoint(seq)
    if at is None or before is None:
        missing = seq if at is None else seq - 1
        needs = f"replay of update {seq} needs checkpoints {seq - 1} and {seq}"
        raise ReplayError(f"{store.path}: no checkpoint {missing}; {needs}")
    stamp = at.book.get(STAMP_KEY)
    if not stamp:
        raise ReplayError(f"checkpoint {seq} carries no inputs stamp (written by an older release)")
    if stamp.get("between_bars"):
        raise ReplayError(
            f"update {seq} ran with [model] sample_between_bars: its estimate reweighs the "
            f"draws update {seq - 1} sampled after its commit, which replay does not "
            "recompute; replay checks updates made without it")
    previous, now = checkpoint_state(store, before), checkpoint_state(store, at)
    modelled = list(stamp["modelled"])
    # Windows as update N saw them (checkpoint N), carries as it started (checkpoint N-1).
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
                         "config_hash": at.config_hash}}  # fmt: skip
    return inputs, meta


def replay_update(
    database: Path, config: LoadedConfig, seq: int, backend: Backend
) -> dict[str, Any]:
    """The comparison as one JSON-ready object; `identical` says whether it holds."""
    store = StateStore(database)
    try:
        inputs, meta = _inputs(store, seq, config.settings.model.seed)
        recorded = {d.symbol: d for d in store.decisions(seq)}
    finally:
        store.close()
    report: dict[str, Any] = {"seq": seq, **meta, "replayed": {
        "backend": backend.name, "adapter": backend.adapter, "numerics": backend.numerics},
        "config_hash": config.config_hash, "instruments": len(inputs.symbols)}  # fmt: skip
    if not inputs.symbols:
        return {**report, "identical": True, "max_abs_diff": 0.0, "mismatches": []}
    estimate, _, _ = refresh(inputs.returns, inputs.carries, inputs.keys, seq, inputs.seed,
                             model_spec(config.settings.model), backend)  # fmt: skip
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
