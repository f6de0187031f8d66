"""What an update's model stage reads, stamped into its checkpoint's book so that
`regime-trader replay` can recompute it: the modelled instruments in batch order, the
code version that ran, and a digest of every input of `refresh` (windows, carries,
instrument keys, seq, seed)."""

from __future__ import annotations

import hashlib
from importlib import metadata
from typing import Any, NamedTuple

import numpy as np

from regime_model.spec import ModelSpec
from regime_model.update import InstrumentCarry
from service.model_state import ModelState, instrument_key
from service.settings import ModelSettings
from service.types import Symbol

STAMP_KEY = "update"  # the checkpoint book's entry (a persisted key: see checkpoint_codec)


def code_version() -> str:
    try:
        return metadata.version("regime-trader")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def model_spec(settings: ModelSettings) -> ModelSpec:
    return ModelSpec(
        n_states=settings.states,
        window=settings.window,
        chains=settings.chains,
        extend_max=settings.extend_max,
        extension_chains=max(settings.extension_chains, settings.chains),
        mcse_max=settings.mcse_max,
        draws=settings.draws,
        warmup_cold=settings.warmup_cold,
        warmup_warm=settings.warmup_warm,
        shift_moves=settings.shift_moves,
        between_bars_margin=settings.between_bars_margin,
        at_risk_margin=settings.at_risk_margin,
    )


class UpdateInputs(NamedTuple):
    symbols: list[Symbol]
    returns: np.ndarray  # [N, T]
    carries: list[InstrumentCarry | None]
    keys: np.ndarray  # [N] uint32
    seq: int
    seed: int

    def digest(self) -> str:
        h = hashlib.sha256()
        h.update("\n".join(self.symbols).encode())
        h.update(np.ascontiguousarray(self.returns, dtype=np.float64).tobytes())
        for carry in self.carries:
            if carry is None:
                h.update(b"cold")
                continue
            for part in carry:
                h.update(np.ascontiguousarray(part, dtype=np.float64).tobytes())
        h.update(np.ascontiguousarray(self.keys, dtype=np.uint32).tobytes())
        h.update(f"{self.seq}/{self.seed}".encode())
        return h.hexdigest()

    def stamp(self) -> dict[str, Any]:
        return {"code_version": code_version(), "modelled": list(self.symbols),
                "inputs_digest": self.digest()}  # fmt: skip


def inputs_of(book: ModelState, symbols: list[Symbol], seq: int, seed: int) -> UpdateInputs:
    states = [book.instruments[s] for s in symbols]
    returns = np.stack([s.returns for s in states]) if states else np.zeros((0, 0))
    keys = np.array([instrument_key(s) for s in symbols], dtype=np.uint32)
    return UpdateInputs(list(symbols), returns, [s.carry for s in states], keys, seq, seed)
