"""The report's figures against small cases computed by hand (service.reports)."""

from __future__ import annotations

import json
import math
import statistics
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from service.reports.buy_hold import buy_and_hold_curve, buy_and_hold_trading
from service.reports.performance import (
    SECONDS_PER_YEAR,
    curve_figures,
    drawdown_series,
    periods_per_year,
    regime_shares,
)
from service.reports.summary import AccountSeries, summarise, summary_json
from service.reports.summary_table import summary_text
from service.reports.trading import Fill, round_trip_profits, trading_figures

T0 = datetime(2025, 3, 3, 14, 30, tzinfo=UTC)
YEAR = timedelta(seconds=SECONDS_PER_YEAR)


def days(n: int) -> list[datetime]:
    return [T0 + timedelta(days=i) for i in range(n)]


SHORT = "under 30 days"
NOT_ANNUALISED = dict.fromkeys(("cagr", "sharpe", "sortino"), SHORT)


def test_a_curve_with_a_recovered_drawdown() -> None:
    times = days(4)
    figures = curve_figures(times, [100.0, 110.0, 99.0, 121.0])
    assert figures.total_return == pytest.approx(0.21)
    dd = figures.max_drawdown
    assert dd.depth == pytest.approx(-0.1)
    assert (dd.peak, dd.trough, dd.recovery) == (times[1], times[2], times[3])
    # three days: nothing annualised, and each says why
    assert (figures.cagr, figures.sharpe, figures.sortino) == (None, None, None)
    assert figures.undefined == NOT_ANNUALISED


def test_a_drawdown_not_recovered_by_the_last_bar() -> None:
    times = days(4)
    dd = curve_figures(times, [100.0, 120.0, 90.0, 100.0]).max_drawdown
    assert dd.depth == pytest.approx(-0.25)
    assert (dd.peak, dd.trough, dd.recovery) == (times[1], times[2], None)
    assert drawdown_series(np.array([100.0, 120.0, 90.0, 100.0])) == pytest.approx(
        [0.0, 0.0, -0.25, 100 / 120 - 1])


def test_the_annualised_figures_of_forty_daily_returns() -> None:
    r = [0.01, -0.02, 0.015, 0.005] * 10  # 40 returns over 40 days: 365.25 a year
    equity = [100.0]
    for x in r:
        equity.append(equity[-1] * (1 + x))
    figures = curve_figures(days(41), equity)
    assert figures.undefined == {}
    assert figures.cagr == pytest.approx((equity[-1] / 100.0) ** (365.25 / 40) - 1, rel=1e-9)
    assert figures.sharpe == pytest.approx(
        statistics.mean(r) / statistics.stdev(r) * math.sqrt(365.25))
    downside = math.sqrt(10 * 0.02**2 / 40)
    assert figures.sortino == pytest.approx(statistics.mean(r) / downside * math.sqrt(365.25))


def test_cagr_is_by_calendar_time() -> None:
    assert curve_figures([T0, T0 + YEAR], [100.0, 150.0]).cagr == pytest.approx(0.5)
    assert curve_figures([T0, T0 + YEAR, T0 + 2 * YEAR],
                         [100.0, 90.0, 121.0]).cagr == pytest.approx(0.1)


def test_annualised_figures_need_a_span_of_30_days() -> None:
    month = timedelta(days=30)
    short = curve_figures([T0, T0 + month - timedelta(seconds=1)], [100.0, 101.0])
    assert short.cagr is None and short.undefined["cagr"] == SHORT
    enough = curve_figures([T0, T0 + month], [100.0, 101.0])
    assert enough.cagr == pytest.approx(1.01 ** (365.25 / 30) - 1)
    assert "cagr" not in enough.undefined
    assert enough.undefined["sharpe"] == "under 30 returns"  # one return


def test_sharpe_and_sortino_need_30_returns() -> None:
    times = [T0 + timedelta(days=2 * i) for i in range(31)]  # 60 days
    equity = [100.0 + (i % 2) for i in range(31)]
    few = curve_figures(times[:30], equity[:30])  # 29 returns
    assert few.cagr is not None and few.sharpe is None and few.sortino is None
    assert few.undefined == {"sharpe": "under 30 returns", "sortino": "under 30 returns"}
    enough = curve_figures(times, equity)  # 30 returns
    assert enough.sharpe is not None and enough.sortino is not None and enough.undefined == {}


def test_a_75_minute_run_has_no_annualised_figure() -> None:
    """The case that showed a CAGR of 943 % and a Sharpe of 90: 41 updates over 75
    minutes, up 0.03 % (docs/reports.md)."""
    rng = np.random.default_rng(3)
    equity = 100_000.0 * np.cumprod(np.r_[1.0, 1 + rng.normal(1e-5, 1e-4, 40)])
    equity[-1] = 100_033.44
    times = [T0 + timedelta(minutes=75 * i / 40) for i in range(41)]
    years = 75 * 60 / SECONDS_PER_YEAR
    assert 1.0003344 ** (1 / years) - 1 == pytest.approx(9.43, abs=0.01)  # CAGR would say
    figures = curve_figures(times, equity)
    assert figures.total_return == pytest.approx(equity[-1] / equity[0] - 1)
    assert (figures.cagr, figures.sharpe, figures.sortino) == (None, None, None)
    assert figures.undefined == NOT_ANNUALISED


def test_annualisation_follows_the_observed_bar_rate() -> None:
    """252 returns in one calendar year, weekends and all: 252 a year, not 365."""
    steps = np.cumsum([1.0] + [365.25 / 252] * 251)
    times = [T0] + [T0 + timedelta(days=float(d)) for d in steps]
    times[-1] = T0 + YEAR
    assert periods_per_year(times) == pytest.approx(252.0)


def test_a_flat_curve() -> None:
    figures = curve_figures(days(40), [100.0] * 40)
    assert figures.total_return == 0.0 and figures.cagr == 0.0
    assert figures.sharpe is None and figures.sortino is None  # no variation to divide by
    assert figures.undefined == {"sharpe": "a flat curve", "sortino": "no losing bar"}
    assert figures.max_drawdown.depth == 0.0 and figures.max_drawdown.peak is None


def test_one_bar_and_no_bar() -> None:
    one = curve_figures([T0], [100.0])
    assert (one.total_return, one.cagr, one.sharpe, one.sortino) == (0.0, None, None, None)
    assert one.max_drawdown.depth == 0.0
    assert one.undefined == dict.fromkeys(("cagr", "sharpe", "sortino"), "one bar")
    none = curve_figures([], [])
    assert none.total_return == 0.0 and none.cagr is None
    assert none.undefined == dict.fromkeys(("cagr", "sharpe", "sortino"), "no bar")


def test_only_gains_have_no_sortino_and_an_overflow_has_no_cagr() -> None:
    gains = curve_figures(days(40), [100.0 * 1.01**i for i in range(40)])
    assert gains.sortino is None and gains.undefined == {"sortino": "no losing bar"}
    huge = curve_figures([T0, T0 + timedelta(days=30)], [1.0, 1e30])  # e^69 to a year's power
    assert huge.cagr is None and huge.undefined["cagr"] == "too large for a float"


def test_time_in_each_regime() -> None:
    assert regime_shares([0, 0, 1, 0]) == {0: 0.75, 1: 0.25}
    assert regime_shares([]) == {}


def fill(seq: int, symbol: str, side: str, qty: float, price: float) -> Fill:
    return Fill(seq, symbol, side, qty, price)


def test_turnover_trades_and_hit_rate_of_closed_round_trips() -> None:
    fills = [fill(1, "A", "buy", 10, 10.0), fill(3, "A", "sell", 10, 12.0),
             fill(2, "B", "buy", 5, 20.0), fill(4, "B", "sell", 5, 18.0)]
    figures = trading_figures(fills, mean_equity=1000.0, last_close={"A": 99.0})
    assert sorted(round_trip_profits(fills, {})) == [-10.0, 20.0]
    assert figures.trades == 4 and figures.round_trips == 2
    assert figures.turnover == pytest.approx((100 + 120 + 100 + 90) / 1000)
    assert figures.hit_rate == 0.5 and figures.costs == 0.0


def test_a_fill_through_zero_closes_one_round_trip_and_opens_the_next() -> None:
    fills = [fill(1, "A", "buy", 10, 10.0), fill(2, "A", "sell", 15, 12.0),
             fill(3, "A", "buy", 5, 11.0)]
    assert round_trip_profits(fills, {}) == pytest.approx([20.0, 5.0])


def test_an_open_holding_is_closed_at_the_last_close() -> None:
    fills = [fill(1, "A", "buy", 10, 10.0)]
    assert round_trip_profits(fills, {"A": 9.0}) == pytest.approx([-10.0])
    assert round_trip_profits(fills, {}) == pytest.approx([0.0])  # at its fill price
    assert trading_figures(fills, 100.0, {"A": 9.0}).hit_rate == 0.0


def test_no_trades() -> None:
    unfilled = [fill(1, "A", "buy", 0.0, 0.0)]  # an order that never filled
    figures = trading_figures(unfilled, mean_equity=1000.0, last_close={})
    assert (figures.trades, figures.round_trips, figures.hit_rate) == (0, 0, None)
    assert figures.turnover == 0.0 and figures.costs == 0.0


CLOSES = {"A": [(1, 100.0), (2, 110.0), (4, 120.0)], "B": [(2, 50.0), (3, 40.0)]}


def test_buy_and_hold_is_equal_weight_from_each_first_close() -> None:
    """A: 1, 1.1, 1.1 (carried), 1.2; B: cash until seq 2, then 1, 0.8, 0.8."""
    curve = buy_and_hold_curve([1, 2, 3, 4], CLOSES, 1000.0)
    assert curve == pytest.approx([1000.0, 1050.0, 950.0, 1000.0])
    trading = buy_and_hold_trading(CLOSES, curve, 1000.0)
    assert (trading.trades, trading.round_trips, trading.hit_rate) == (2, 2, 0.5)
    assert trading.turnover == pytest.approx(1000.0 / 1000.0)
    assert buy_and_hold_curve([1, 2], {}, 500.0) == pytest.approx([500.0, 500.0])


SUMMARY_KEYS = {"total_return", "cagr", "sharpe", "sortino", "max_drawdown",
                "max_drawdown_peak", "max_drawdown_trough", "max_drawdown_recovery",
                "turnover", "costs", "trades", "round_trips", "hit_rate", "undefined"}


def test_the_summary_of_an_account_and_its_json_and_text() -> None:
    series = AccountSeries(
        account="alpha", seqs=[1, 2, 3, 4], times=days(4),
        equity=[1000.0, 1100.0, 990.0, 1210.0],
        fills=[fill(1, "A", "buy", 5, 100.0), fill(3, "A", "sell", 5, 110.0)],
        closes=CLOSES, regimes=[0, 0, 1, 0, 1, 0],
    )  # fmt: skip
    summary = summarise(series)
    as_json = summary_json(summary)
    assert as_json.keys() >= SUMMARY_KEYS | {"time_in_regime", "buy_and_hold"}
    assert as_json["buy_and_hold"].keys() >= SUMMARY_KEYS
    assert as_json["total_return"] == pytest.approx(0.21)
    assert as_json["buy_and_hold"]["total_return"] == pytest.approx(0.0)
    assert as_json["time_in_regime"] == {"0": pytest.approx(4 / 6), "1": pytest.approx(2 / 6)}
    assert as_json["trades"] == 2 and as_json["hit_rate"] == 1.0
    assert as_json["max_drawdown_peak"] == days(4)[1].isoformat()
    assert as_json["cagr"] is None and as_json["undefined"] == NOT_ANNUALISED  # 3 days
    assert as_json["buy_and_hold"]["undefined"] == NOT_ANNUALISED
    json.dumps(as_json, allow_nan=False)  # plain JSON: no NaN or Infinity
    text = summary_text(summary)
    assert "total return" in text and "21.00%" in text and "buy & hold" in text
    cagr_row = next(line for line in text.splitlines() if line.startswith("CAGR"))
    assert cagr_row.split("  ", 1)[1].split() == ["n/a", "(under", "30", "days)"] * 2
    assert "—" in text  # other undefined figures (a drawdown not recovered): a plain dash


def test_the_summary_of_an_account_without_history() -> None:
    empty = AccountSeries("alpha", [], [], [], [], {}, [])
    as_json = summary_json(summarise(empty))
    assert as_json["bars"] == 0 and as_json["trades"] == 0 and as_json["hit_rate"] is None
    json.dumps(as_json, allow_nan=False)
