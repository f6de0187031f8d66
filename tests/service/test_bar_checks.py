"""Every bar is checked against one set of bounds, whatever its source; a bad bar is
skipped, logged once (`market.bar_rejected`) and counted (`bars_rejected`)."""

from __future__ import annotations

import dataclasses
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import structlog
from conftest import FAST_INSTRUMENTS, FAST_SETTINGS

from gpu_backend import select_backend
from service.config_loader import load_config
from service.market.bar_batch import batch_of
from service.market.bar_checks import (
    MAX_PRICE,
    MAX_VOLUME,
    CheckedFeed,
    all_usable,
    bar_problem,
    usable_rows,
)
from service.market.csv_replay import CsvMarket
from service.market.synthetic import SyntheticMarket
from service.settings import CsvMarketSettings, SyntheticMarketSettings
from service.state.store import StateStore
from service.types import Bar
from service.worker import assembly
from service.worker.trader import BarCursor, Trader

T = datetime(2024, 3, 1, 14, 30, tzinfo=UTC)
GOOD = (100.0, 101.0, 99.0, 100.0, 10.0)


@pytest.mark.parametrize(
    ("values", "kind"),
    [
        ((1e300, 1e300, 1e300, 1e300, 10.0), "implausible open"),
        ((100.0, MAX_PRICE, 99.0, 100.0, 10.0), "implausible high"),
        ((100.0, math.inf, 99.0, 100.0, 10.0), "non-finite high"),
        ((100.0, 101.0, math.nan, 100.0, 10.0), "non-finite low"),
        ((100.0, 101.0, 99.0, -math.inf, 10.0), "non-finite close"),
        ((0.0, 101.0, 0.0, 100.0, 10.0), "non-positive open"),
        ((-5.0, 101.0, -6.0, 100.0, 10.0), "non-positive open"),
        ((100.0, 101.0, 99.0, 100.0, -1.0), "negative volume"),
        ((100.0, 101.0, 99.0, 100.0, math.nan), "non-finite volume"),
        ((100.0, 101.0, 99.0, 100.0, math.inf), "non-finite volume"),
        ((100.0, 101.0, 99.0, 100.0, MAX_VOLUME * 10), "implausible volume"),
        ((100.0, 98.0, 99.0, 98.5, 10.0), "high below low"),
        ((100.0, 101.0, 99.0, 102.0, 10.0), "close outside [low, high]"),
        ((98.0, 101.0, 99.0, 100.0, 10.0), "open outside [low, high]"),
    ],
)
def test_each_kind_of_bad_bar_is_named(values: tuple[float, ...], kind: str) -> None:
    reason = bar_problem(Bar(T, *values))
    assert reason is not None and reason.split(":")[0] == kind


def test_a_plausible_bar_and_the_bounds_edges_pass() -> None:
    assert bar_problem(Bar(T, *GOOD)) is None
    assert bar_problem(Bar(T, 1e-6, MAX_PRICE * 0.999, 1e-6, 1.0, 0.0)) is None
    assert bar_problem(Bar(T, 1.0, 1.0, 1.0, 1.0, MAX_VOLUME)) is None
    assert bar_problem(Bar(T.replace(tzinfo=None), *GOOD)) == f"naive time: {T:%Y-%m-%dT%H:%M:%S}"


def test_a_csv_row_with_a_price_of_1e300_is_skipped(tmp_path: Path) -> None:
    stamp = T.isoformat().replace("+00:00", "Z")
    (tmp_path / "SPY.csv").write_text(
        f"time,open,high,low,close,volume\n{stamp},1e300,1e300,1e300,1e300,1\n"
        f"{(T + timedelta(minutes=1)).isoformat()},100,101,99,100,1\n")
    with structlog.testing.capture_logs() as logs:
        feed = CsvMarket(CsvMarketSettings(directory=tmp_path), timedelta(minutes=1))
        bars = feed.history(["SPY"], T + timedelta(hours=1), 10)["SPY"]
    assert [b.close for b in bars] == [100.0]
    [skip] = [e for e in logs if e["event"] == "market.row_skipped"]
    assert skip["row"] == 2 and skip["reason"].startswith("implausible open: 1e+300")


def test_a_feed_producing_bad_bars_is_screened_and_each_is_logged_once() -> None:
    # Past the settings' bounds on purpose (model_construct skips them): bars bar_checks refuses.
    wild = SyntheticMarket(SyntheticMarketSettings.model_construct(
        calm_vol=80.0, turbulent_vol=80.0, start=T))
    feed = CheckedFeed(wild)
    end = T + timedelta(minutes=200)
    with structlog.testing.capture_logs() as logs:
        kept = feed.history(["SPY"], end, 201)["SPY"]
        again = feed.bars_after({"SPY": T}, end)["SPY"]
    raw = wild.history(["SPY"], end, 201)["SPY"]
    bad = [b for b in raw if bar_problem(b) is not None]
    rejected = [e for e in logs if e["event"] == "market.bar_rejected"]
    assert bad and kept == [b for b in raw if bar_problem(b) is None]
    assert again == [b for b in kept if b.time > T]
    assert [(e["symbol"], e["time"]) for e in rejected] == [
        ("SPY", b.time.isoformat()) for b in bad]  # once each, though asked twice
    assert all(e["reason"] == bar_problem(b) for e, b in zip(rejected, bad, strict=True))
    assert feed.take_rejected() == len(bad) and feed.take_rejected() == 0


def test_the_trader_counts_rejected_bars_in_the_update_event(tmp_path: Path) -> None:
    (tmp_path / "instruments.toml").write_text(FAST_INSTRUMENTS)
    (tmp_path / "service.toml").write_text(
        FAST_SETTINGS + "\n[market.synthetic]\ncalm_vol = 1.0\nturbulent_vol = 1.0\n")
    config = load_config(tmp_path / "service.toml")
    market = assembly.build_market(config)
    first = assembly.first_trading_bar(config, market, ("SPY",))
    cursor = BarCursor(first - market.bar_interval)
    store = StateStore(assembly.state_path(tmp_path, "alpha"))
    broker = assembly.build_broker(config, "alpha", tmp_path, market, cursor)
    trader = Trader("alpha", config, market, broker, store, select_backend("numpy"), cursor,
                    cursor)
    trader.resume()
    with structlog.testing.capture_logs() as logs:
        for n in range(3):
            trader.update(first + n * market.bar_interval)
    broker.close()
    store.close()
    rejected = [e for e in logs if e["event"] == "market.bar_rejected"]
    counts = [e["bars_rejected"] for e in logs  # a skipped update (no usable bar) counts too
              if e["event"] in ("update.completed", "update.skipped")]
    assert rejected and sum(counts) == len(rejected)
    for state in trader.model_state.instruments.values():
        assert state.last_close is None or 0 < state.last_close < MAX_PRICE



def test_the_batch_check_passes_exactly_the_batches_whose_every_bar_passes() -> None:
    """all_usable (the numpy pass over a whole fetch) never passes a bar bar_problem
    refuses, whatever the fault; a clean batch passes whole."""
    t = datetime(2026, 1, 5, 15, tzinfo=UTC)
    good = Bar(t, 10.0, 11.0, 9.0, 10.5, 100.0)
    changes: list[dict[str, object]] = [
        {"open": math.nan}, {"high": math.inf}, {"low": 0.0}, {"close": MAX_PRICE},
        {"volume": -1.0}, {"volume": MAX_VOLUME * 2}, {"high": 8.0}, {"close": 12.0},
        {"open": True}, {"volume": "100"}, {"time": t.replace(tzinfo=None)},
    ]
    assert all_usable([good] * 5) and all_usable([])
    for change in changes:
        bad = dataclasses.replace(good, **change)  # type: ignore[arg-type]
        assert bar_problem(bad) is not None
        assert not all_usable([good, bad, good]), change


def test_a_batch_is_screened_as_its_bars_are() -> None:
    """batch_after keeps, logs and counts exactly what bars_after does, bar by bar."""
    settings = SyntheticMarketSettings.model_construct(calm_vol=80.0, turbulent_vol=80.0,
                                                       start=T)
    after = {"SPY": T, "QQQ": T + timedelta(minutes=150), "IWM": T + timedelta(minutes=7)}
    end = T + timedelta(minutes=200)
    by_bars = CheckedFeed(SyntheticMarket(settings))
    by_batch = CheckedFeed(SyntheticMarket(settings))
    with structlog.testing.capture_logs() as bar_logs:
        kept = by_bars.bars_after(after, end)
    with structlog.testing.capture_logs() as batch_logs:
        batch = by_batch.batch_after(after, end)
    assert bar_logs and batch_logs == bar_logs
    assert batch.as_dict() == kept
    assert by_batch.take_rejected() == by_bars.take_rejected() == len(bar_logs)


def test_a_history_batch_is_screened_as_its_history_is() -> None:
    """history_batch (what the simulated broker prices positions with) keeps, logs and
    counts exactly what history does: a symbol whose last bar is refused has no bar."""
    settings = SyntheticMarketSettings.model_construct(calm_vol=80.0, turbulent_vol=80.0,
                                                       start=T)
    symbols = [f"S{i}" for i in range(40)]
    end = T + timedelta(minutes=200)
    for count in (1, 30):
        by_bars = CheckedFeed(SyntheticMarket(settings))
        by_batch = CheckedFeed(SyntheticMarket(settings))
        with structlog.testing.capture_logs() as bar_logs:
            kept = by_bars.history(symbols, end, count)
        with structlog.testing.capture_logs() as batch_logs:
            batch = by_batch.history_batch(symbols, end, count)
        assert bar_logs and batch_logs == bar_logs
        assert batch.as_dict() == kept and batch.symbols == tuple(symbols)
        assert by_batch.take_rejected() == by_bars.take_rejected() == len(bar_logs)
    assert any(not bars for bars in by_bars.history(symbols, end, 1).values())


def test_usable_rows_agree_with_bar_problem_row_by_row() -> None:
    t = datetime(2026, 1, 5, 15, tzinfo=UTC)
    good = Bar(t, 10.0, 11.0, 9.0, 10.5, 100.0)
    changes: list[dict[str, object]] = [
        {}, {"open": math.nan}, {"high": math.inf}, {"low": 0.0}, {"close": MAX_PRICE},
        {"volume": -1.0}, {"volume": MAX_VOLUME}, {"volume": MAX_VOLUME * 2}, {"high": 8.0},
        {"close": 12.0}, {"time": t.replace(tzinfo=None)},
    ]
    bars = [dataclasses.replace(good, **change) for change in changes]  # type: ignore[arg-type]
    batch = batch_of({f"S{i}": [bar] for i, bar in enumerate(bars)})
    assert usable_rows(batch).tolist() == [bar_problem(bar) is None for bar in bars]
