"""The synthetic market: bars are a pure function of (seed, symbol, time), with clearly
visible calm and turbulent regimes."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

import numpy as np
import pytest

from service.market.base import MarketDataError
from service.market.synthetic import (
    CHUNK,
    SyntheticMarket,
    _stream_key,
    _uniform,
)
from service.settings import SyntheticMarketSettings
from service.types import Bar

SETTINGS = SyntheticMarketSettings(seed=7)
START = SETTINGS.start
MINUTE = timedelta(minutes=1)


def at(n: int) -> datetime:
    return START + n * MINUTE


def closes(bars: list[Bar]) -> np.ndarray:
    return np.array([b.close for b in bars])


def regimes_of_bars(market: SyntheticMarket, lo: int, hi: int) -> np.ndarray:
    """True regime of bars lo..hi, asking once per segment (regimes hold for a segment)."""
    size = SETTINGS.segment_bars
    per_segment = [market.true_regime("SPY", at(s * size)) for s in range(hi // size + 1)]
    return np.repeat(per_segment, size)[lo : hi + 1]


def test_bars_are_the_same_for_a_fresh_feed_and_whatever_was_asked_before() -> None:
    walked = SyntheticMarket(SETTINGS)
    walked.history(["SPY"], at(3 * CHUNK + 5), 10)
    fresh = SyntheticMarket(SETTINGS)
    n = 5 * CHUNK + 17
    assert fresh.history(["SPY"], at(n), 40) == walked.history(["SPY"], at(n), 40)


def test_a_restarted_feed_back_fills_exactly_the_bars_it_missed() -> None:
    live = SyntheticMarket(SETTINGS)
    seen = [bar for n in range(CHUNK - 3, CHUNK + 3) for bar in
            live.bars_after({"SPY": at(n - 1)}, at(n))["SPY"]]
    restarted = SyntheticMarket(SETTINGS)
    backfill = restarted.bars_after({"SPY": at(CHUNK - 4)}, at(CHUNK + 2))["SPY"]
    assert backfill == seen
    assert [b.time for b in backfill] == [at(n) for n in range(CHUNK - 3, CHUNK + 3)]


def test_history_returns_the_last_count_bars_at_or_before_end() -> None:
    bars = SyntheticMarket(SETTINGS).history(["SPY"], at(100) + timedelta(seconds=30), 5)["SPY"]
    assert [b.time for b in bars] == [at(n) for n in range(96, 101)]


def test_there_are_no_bars_before_start() -> None:
    market = SyntheticMarket(SETTINGS)
    assert [b.time for b in market.history(["SPY"], at(2), 10)["SPY"]] == [at(0), at(1), at(2)]
    assert market.history(["SPY"], at(-1), 10) == {"SPY": []}
    after = market.bars_after({"SPY": at(-50)}, at(1))["SPY"]
    assert [b.time for b in after] == [at(0), at(1)]


def test_bars_after_is_exclusive_of_after_and_inclusive_of_until() -> None:
    market = SyntheticMarket(SETTINGS)
    got = market.bars_after({"SPY": at(10), "QQQ": at(12)}, at(13))
    assert [b.time for b in got["SPY"]] == [at(11), at(12), at(13)]
    assert [b.time for b in got["QQQ"]] == [at(13)]
    assert market.bars_after({"SPY": at(13)}, at(13)) == {"SPY": []}


def test_bars_are_consistent_ohlcv_and_open_at_the_previous_close() -> None:
    bars = SyntheticMarket(SETTINGS).history(["SPY"], at(2 * CHUNK + 10), 2 * CHUNK)["SPY"]
    for prev, bar in itertools.pairwise(bars):
        assert bar.open == prev.close
    for bar in bars:
        assert bar.low <= min(bar.open, bar.close) <= max(bar.open, bar.close) <= bar.high
        assert bar.volume > 0 and bar.low > 0
    first = SyntheticMarket(SETTINGS).history(["SPY"], at(0), 1)["SPY"][0]
    assert first.open == pytest.approx(SETTINGS.start_price)


def test_symbols_and_seeds_give_different_paths() -> None:
    market = SyntheticMarket(SETTINGS)
    got = market.history(["SPY", "QQQ"], at(500), 100)
    other_seed = SyntheticMarket(SyntheticMarketSettings(seed=8)).history(["SPY"], at(500), 100)
    assert not np.allclose(closes(got["SPY"]), closes(got["QQQ"]))
    assert not np.allclose(closes(got["SPY"]), closes(other_seed["SPY"]))


def test_regimes_hold_for_a_segment_and_are_turbulent_about_p_of_the_time() -> None:
    market = SyntheticMarket(SETTINGS)
    segments = 2000
    regimes = [market.true_regime("SPY", at(s * SETTINGS.segment_bars)) for s in range(segments)]
    assert abs(np.mean(regimes) - SETTINGS.p_turbulent) < 0.05
    seg = 3 * SETTINGS.segment_bars
    inside = {market.true_regime("SPY", at(seg + k)) for k in range(SETTINGS.segment_bars)}
    assert len(inside) == 1


def test_turbulent_returns_are_about_three_times_as_volatile_as_calm_ones() -> None:
    market = SyntheticMarket(SETTINGS)
    n = 20 * CHUNK
    bars = market.history(["SPY"], at(n - 1), n)["SPY"]
    returns = np.log(closes(bars)[1:] / closes(bars)[:-1])
    regimes = regimes_of_bars(market, 1, n - 1)
    calm_sd, turbulent_sd = returns[regimes == 0].std(), returns[regimes == 1].std()
    assert calm_sd == pytest.approx(SETTINGS.calm_vol, rel=0.03)
    assert turbulent_sd == pytest.approx(SETTINGS.turbulent_vol, rel=0.03)
    assert abs(returns[regimes == 0].mean()) < 4 * SETTINGS.calm_vol / np.sqrt(len(returns))


def test_standardised_returns_look_standard_normal() -> None:
    market = SyntheticMarket(SETTINGS)
    n = 10 * CHUNK
    bars = market.history(["SPY"], at(n), n)["SPY"]
    returns = np.log(closes(bars)[1:] / closes(bars)[:-1])
    regimes = regimes_of_bars(market, 2, n)
    sd = np.where(regimes == 1, SETTINGS.turbulent_vol, SETTINGS.calm_vol)
    z = returns / sd
    assert abs(z.mean()) < 0.05
    assert z.std() == pytest.approx(1.0, rel=0.03)
    assert np.mean(np.abs(z) > 1.96) == pytest.approx(0.05, abs=0.01)


def test_a_far_future_bar_is_available_without_walking_every_bar() -> None:
    market = SyntheticMarket(SETTINGS)
    five_years = 5 * 365 * 24 * 60
    bar = market.history(["SPY"], at(five_years), 1)["SPY"][0]
    assert bar.time == at(five_years)
    assert np.isfinite(bar.close) and bar.close > 0


def test_feed_is_unbounded_and_refuses_naive_times() -> None:
    market = SyntheticMarket(SETTINGS)
    assert market.first_bar_time(["SPY"]) is None
    assert market.last_bar_time(["SPY"]) is None
    assert market.bar_interval == MINUTE
    with pytest.raises(ValueError, match="naive datetime"):
        market.history(["SPY"], datetime(2024, 1, 2), 1)  # noqa: DTZ001
    with pytest.raises(MarketDataError, match="bars start at"):
        market.true_regime("SPY", at(-1))


def test_settings_name_the_bad_value() -> None:
    with pytest.raises(ValueError, match=r"p_turbulent\n.*less than 1"):
        SyntheticMarketSettings(p_turbulent=1.5)
    with pytest.raises(ValueError, match="timestamps need a timezone"):
        SyntheticMarketSettings(start=datetime(2024, 1, 1))  # noqa: DTZ001


def splitmix64_reference(key: int, counter: int) -> float:
    """The uniform for one counter, in plain Python integers (obviously correct)."""
    mask = (1 << 64) - 1
    x = (key + counter * 0x9E3779B97F4A7C15) & mask
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
    x ^= x >> 31
    return ((x >> 11) + 0.5) * 2.0**-53


def test_the_vectorised_counter_generator_matches_a_plain_integer_reference() -> None:
    key = _stream_key(7, "SPY", "return.u1")
    counters = np.array([0, 1, 2, 4095, 4096, 10**9, 2**40], dtype=np.int64)
    expected = [splitmix64_reference(int(key), int(c)) for c in counters]
    assert _uniform(key, counters).tolist() == expected


@pytest.mark.parametrize(
    ("field", "value"),
    [("start_price", 1e300), ("start_price", float("inf")), ("calm_vol", float("inf")),
     ("turbulent_vol", float("nan")), ("calm_drift", float("nan")),
     ("turbulent_drift", float("-inf")), ("base_volume", float("inf")), ("base_volume", 1e300)],
)
def test_settings_refuse_implausible_or_non_finite_values(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=rf"{field}\n"):
        SyntheticMarketSettings(**{field: value})


def test_a_rotation_beyond_the_old_chunk_cache_gets_the_same_bars_across_a_chunk_edge() -> None:
    """300 symbols (more than the 64 chunks once cached for all symbols) fetched across a
    chunk boundary, warm bar by bar, equal each symbol's bars from a feed of its own."""
    symbols = [f"S{i:03d}" for i in range(300)]
    shared = SyntheticMarket(SETTINGS)
    edge = CHUNK - 2
    got = shared.history(symbols, at(edge), 3)
    for n in range(edge + 1, edge + 4):
        for symbol, bars in shared.bars_after({s: at(n - 1) for s in symbols}, at(n)).items():
            got[symbol] += bars
    for symbol in symbols[::37]:
        own = SyntheticMarket(SETTINGS).history([symbol], at(edge + 3), 6)
        assert got[symbol] == own[symbol]
