"""`regime.changed`: a line for each instrument whose most probable regime changed, with
what it was, what it is and how probable; logged once the update's checkpoint is
committed and its orders sent, not in the strategy stage ahead of them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from structlog.testing import capture_logs
from test_trader import Rig, make_config
from test_unconverged_targets import _estimate

from service.model_state import InstrumentState, ModelState
from service.settings import StrategySettings
from service.types import BrokerSnapshot
from service.worker.targets import decide_targets

UNKNOWN_REGIME = 7  # not a regime of a 2-state model: every instrument modelled changes


def test_the_stage_returns_the_changes_and_logs_them_only_when_asked() -> None:
    book = ModelState({s: InstrumentState(s, last_close=100.0) for s in ("SPY", "QQQ", "IWM")})
    book.instruments["SPY"].regime = 0  # was calm
    book.instruments["QQQ"].regime = 1  # was turbulent, stays so
    # IWM has no regime yet: its first is not a change
    p_turbulent = np.array([0.9, 0.8, 0.7])
    estimate = _estimate([True, True, True])._replace(
        regime_probs=np.stack([1 - p_turbulent, p_turbulent], axis=1))
    snapshot = BrokerSnapshot(cash=30_000.0, equity=30_000.0)
    with capture_logs() as logs:
        _, _, _, changes = decide_targets(book, ("SPY", "QQQ", "IWM"), ["SPY", "QQQ", "IWM"],
                                          estimate, snapshot, 4, StrategySettings(), "t")
        assert [e for e in logs if e["event"] == "regime.changed"] == []  # not yet
        changes.log()
    lines = [e for e in logs if e["event"] == "regime.changed"]
    assert lines == [{"event": "regime.changed", "log_level": "info", "symbol": "SPY",
                      "from": 0, "to": 1, "probability": 0.9}]  # fmt: skip
    assert [book.instruments[s].regime for s in ("SPY", "QQQ", "IWM")] == [1, 1, 1]


def test_an_update_logs_its_regime_changes_after_its_commit_and_orders(tmp_path: Path) -> None:
    """Entering below 0.99, the first update buys: its order lines come first, then the
    regime changes, with the update's checkpoint committed."""
    entering = "\n[strategy]\nenter_below = 0.99\nexit_above = 0.995\n"
    rig = Rig(make_config(tmp_path, entering), tmp_path / "state")
    rig.trader.resume()
    instruments = rig.trader.model_state.instruments
    for state in instruments.values():
        state.regime = UNKNOWN_REGIME
    seen = rig.log_with_latest_seq()
    rig.update(0)
    rig.close()
    names = [name for name, _, _ in seen]
    changed = [(seq, e) for name, seq, e in seen if name == "regime.changed"]
    modelled = [s for s, state in instruments.items() if state.regime != UNKNOWN_REGIME]
    assert sorted(e["symbol"] for _, e in changed) == sorted(modelled) != []
    assert {seq for seq, _ in changed} == {1}  # the update's own checkpoint committed
    assert all(e["from"] == UNKNOWN_REGIME and e["to"] in (0, 1) for _, e in changed)
    first = names.index("regime.changed")
    assert "order.submitted" in names[:first]  # the update did send orders, before
    assert not [n for n in names[first:] if n.startswith("order.")]
    assert first < names.index("update.completed")
