"""A worker's model state through its checkpoint form and back, as resume reads it."""

from __future__ import annotations

import numpy as np

from regime_model.update import InstrumentCarry
from service.model_state import InstrumentState, ModelState
from service.state.checkpoint_codec import decode_model_state, encode_model_state


def carry(seed: int, chains: int = 4, dim: int = 6) -> InstrumentCarry:
    gen = np.random.default_rng(seed)
    return InstrumentCarry(gen.normal(size=(chains, dim)), gen.uniform(0.1, 0.5, chains),
                           gen.uniform(0.5, 2.0, dim))  # fmt: skip


def test_carries_of_every_shape_and_none_come_back_exactly() -> None:
    """Carries of the common shape travel stacked; one of another shape (the model's
    states changed under it) and an instrument without one come back as they were."""
    state = ModelState({
        "SPY": InstrumentState("SPY", returns=np.array([0.01, -0.02]), carry=carry(1)),
        "QQQ": InstrumentState("QQQ", returns=np.array([0.03]), carry=carry(2)),
        "GLD": InstrumentState("GLD", returns=np.array([0.0, 0.1]), carry=carry(3, dim=12)),
        "IWM": InstrumentState("IWM"),
    }, rotation_start=2)  # fmt: skip
    blob, book, windows = encode_model_state(state)
    assert all(len(w.fresh) == 0 for w in windows.values())  # nothing appended: all saved
    stored = {s: i.returns.tolist() for s, i in state.instruments.items()}  # what the table holds
    back = decode_model_state(blob, book, stored)
    assert back.rotation_start == 2 and set(back.instruments) == set(state.instruments)
    for symbol, instrument in state.instruments.items():
        got = back.instruments[symbol]
        assert np.array_equal(got.returns, instrument.returns)
        if instrument.carry is None:
            assert got.carry is None
        else:
            assert got.carry is not None
            for a, b in zip(got.carry, instrument.carry, strict=True):
                assert np.array_equal(a, b) and a.dtype == np.float64
    assert b"SPY/carry" not in blob and b"GLD/carry/position" in blob  # stacked, but GLD
