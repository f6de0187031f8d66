"""The strategy: volatility targeting, flat when turbulence is likely, with hysteresis."""

from __future__ import annotations

import math

import numpy as np
import pytest

from service.settings import StrategySettings
from service.strategy import (
    Decision,
    Signal,
    Signals,
    client_order_id,
    decide,
    decide_all,
    order_intents,
    previous_targets,
)
from service.types import BrokerSnapshot, OrderOutcome, OrderStatus, Position, Side

SETTINGS = StrategySettings()
BUDGET = 10_000.0


def signal(p: float, converged: bool = True, vol: float = 0.001) -> Signal:
    return Signal("SPY", p_turbulent=p, pred_vol=vol, price=100.0, converged=converged)


def test_a_calm_instrument_is_held_at_the_volatility_target_weight() -> None:
    decision = decide(signal(0.1, vol=0.001), None, BUDGET, SETTINGS)
    per_bar = SETTINGS.target_vol / SETTINGS.bars_per_year**0.5
    assert decision.invested
    assert decision.target_weight == min(1.0, per_bar / 0.001)
    assert decision.target_qty == int(decision.target_weight * BUDGET / 100.0)


def test_hysteresis_holds_between_the_thresholds() -> None:
    held = decide(signal(0.1), None, BUDGET, SETTINGS)
    assert decide(signal(0.5), held, BUDGET, SETTINGS).invested  # between: stay in
    out = decide(signal(0.7), held, BUDGET, SETTINGS)
    assert not out.invested and out.target_qty == 0
    assert not decide(signal(0.5), out, BUDGET, SETTINGS).invested  # between: stay out


def test_an_unconverged_posterior_halves_the_previous_target_and_never_opens_one() -> None:
    previous = Decision("SPY", True, 0.5, 51.0)
    once = decide(signal(0.01, converged=False), previous, BUDGET, SETTINGS)
    assert once == Decision("SPY", True, 0.25, 25.0)  # whatever the unconverged p says
    assert decide(signal(0.01, converged=False), once, BUDGET, SETTINGS).target_qty == 12.0
    flat = Decision("SPY", False, 0.0, 0.0)
    assert decide(signal(0.01, converged=False), flat, BUDGET, SETTINGS) == flat
    assert decide(signal(0.01, converged=False), None, BUDGET, SETTINGS) == flat
    one_share = Decision("SPY", True, 0.01, 1.0)
    assert not decide(signal(0.01, converged=False), one_share, BUDGET, SETTINGS).invested


def test_unconverged_exposure_zero_goes_flat_and_one_keeps_the_stale_target() -> None:
    previous = Decision("SPY", True, 0.5, 50.0)
    flat = StrategySettings(unconverged_exposure=0.0)
    assert decide(signal(0.01, converged=False), previous, BUDGET, flat).target_qty == 0.0
    stale = StrategySettings(unconverged_exposure=1.0)
    assert decide(signal(0.99, converged=False), previous, BUDGET, stale) == previous


def test_intents_move_positions_to_targets_and_skip_small_or_busy_ones() -> None:
    decisions = [
        Decision("SPY", True, 0.5, 50.0),
        Decision("QQQ", False, 0.0, 0.0),
        Decision("IWM", True, 0.5, 11.0),
        Decision("TLT", True, 0.5, 30.0),
    ]
    snapshot = BrokerSnapshot(
        cash=0.0,
        equity=40_000.0,
        positions={"QQQ": Position("QQQ", 20.0, 100.0), "IWM": Position("IWM", 10.0, 100.0)},
        open_orders=(OrderOutcome(client_order_id("alpha", 6, "TLT"), OrderStatus.ACCEPTED),),
    )
    prices = {"SPY": 100.0, "QQQ": 100.0, "IWM": 100.0, "TLT": 100.0}
    intents = order_intents(decisions, snapshot, prices, BUDGET, "alpha", 7, SETTINGS)
    assert [(i.symbol, i.side, i.qty) for i in intents] == [
        ("SPY", Side.BUY, 50.0),
        ("QQQ", Side.SELL, 20.0),
    ]
    assert intents[0].client_order_id == "rt-alpha-7-SPY"


def test_client_order_ids_are_deterministic_legal_and_short() -> None:
    cid = client_order_id("a" * 16, 9_999_999_999, "ABCDEFGHIJ.KLMNO")
    assert cid == client_order_id("a" * 16, 9_999_999_999, "ABCDEFGHIJ.KLMNO")
    assert len(cid) <= 48 and cid.endswith("ABCDEFGHIJ_KLMNO")
    assert client_order_id("alpha", 1, "BTC/USD") != client_order_id("alpha", 1, "BTC.USD")
    assert len(client_order_id("a" * 16, 9_999_999_999, "ABCDEFGHIJ/KLMNO")) == 48


def _some(rng: np.random.Generator, usual: np.ndarray, special: list[float]) -> list[float]:
    """`usual`, a third of it replaced by the `special` values."""
    picked = rng.choice(special, usual.size)
    return np.where(rng.uniform(size=usual.size) < 1 / 3, picked, usual).tolist()


def _cases(rng: np.random.Generator, n: int) -> tuple[list[Signal], list[Decision | None]]:
    """Signals and previous decisions over every branch of decide: the thresholds exactly,
    unusable volatilities, no price, unconverged, no previous decision."""
    p = _some(rng, rng.uniform(size=n), [SETTINGS.enter_below, SETTINGS.exit_above, math.nan])
    vol = _some(rng, rng.uniform(1e-5, 1e-2, n), [0.0, -1e-3, math.inf, math.nan, 5e-324])
    price = _some(rng, rng.uniform(1.0, 500.0, n), [0.0])
    converged = (rng.uniform(size=n) < 0.8).tolist()
    signals = [Signal(f"S{i}", *fields) for i, fields in enumerate(zip(
        p, vol, price, converged, strict=True))]
    previous = [None if rng.uniform() < 0.2 else
                Decision(f"S{i}", bool(rng.uniform() < 0.6), float(rng.uniform()),
                         float(rng.integers(0, 500))) for i in range(n)]
    return signals, previous


def _decided_all(signals: list[Signal], previous: list[Decision | None], budget: float,
                 settings: StrategySettings) -> list[Decision]:
    columns = Signals(*(np.array(c, dtype=t) for c, t in zip(
        zip(*[(s.p_turbulent, s.pred_vol, s.price, s.converged) for s in signals],
            strict=True), (np.float64, np.float64, np.float64, bool), strict=True)))
    targets = decide_all(columns, previous_targets(previous), budget, settings)
    return [Decision(s.symbol, *fields) for s, fields in zip(signals, zip(
        targets.invested.tolist(), targets.weight.tolist(), targets.qty.tolist(), strict=True),
        strict=True)]


@pytest.mark.parametrize("exposure", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("budget", [10_000.0, 0.0, -2_500.0])
def test_deciding_all_at_once_is_deciding_each_bit_for_bit(exposure: float,
                                                            budget: float) -> None:
    settings = StrategySettings(unconverged_exposure=exposure)
    signals, previous = _cases(np.random.default_rng(7), 400)
    one_by_one = [decide(s, d, budget, settings) for s, d in zip(signals, previous, strict=True)]
    # repr tells -0.0 from 0.0 and a bool from a number
    assert repr(_decided_all(signals, previous, budget, settings)) == repr(one_by_one)


@pytest.mark.parametrize(("budget", "error"), [(math.nan, ValueError), (math.inf, OverflowError)])
def test_deciding_all_fails_where_deciding_each_would(budget: float, error: type) -> None:
    signals, previous = [signal(0.1)], [None]
    with pytest.raises(error):
        decide(signals[0], previous[0], budget, SETTINGS)
    with pytest.raises(error):
        _decided_all(signals, previous, budget, SETTINGS)
