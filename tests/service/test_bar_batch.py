"""A batch is bars_after's bars as columns: every feed's batch_after holds exactly the bars
its bars_after returns (and history_batch those of history), symbol by symbol, in the same
order and with the same values."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from service.market.bar_batch import BarBatch, batch_of
from service.market.base import MarketFeed
from service.market.csv_replay import CsvMarket
from service.market.synthetic import CHUNK, SyntheticMarket
from service.settings import CsvMarketSettings, SyntheticMarketSettings
from service.types import Bar

MINUTE = timedelta(minutes=1)
START = datetime(2024, 3, 1, 14, 30, tzinfo=UTC)


def at(n: int) -> datetime:
    return START + n * MINUTE


def synthetic(_: Path) -> MarketFeed:
    return SyntheticMarket(SyntheticMarketSettings(seed=3, start=START), MINUTE)


def csv(folder: Path) -> MarketFeed:
    for k, symbol in enumerate(("SPY", "QQQ", "IWM")):
        rows = [f"{at(n).isoformat()},{100 + k + n / 8},{102 + k + n / 8},{99 + k},"
                f"{101 + k + n / 16},{10 * n}" for n in range(0, 40, k + 1)]
        (folder / f"{symbol}.csv").write_text("time,open,high,low,close,volume\n"
                                              + "\n".join(rows) + "\n")
    return CsvMarket(CsvMarketSettings(directory=folder), MINUTE)


ASKS = [
    ({"SPY": at(3), "QQQ": at(3), "IWM": at(3)}, at(4)),  # a warm update: one bar each
    ({"SPY": at(3), "QQQ": at(30), "IWM": at(4)}, at(12)),  # several, and none for QQQ
    ({"SPY": at(-5), "QQQ": at(0)}, at(2)),  # from before the first bar
    ({"SPY": at(12)}, at(12)),  # nothing new
    ({}, at(5)),
]


@pytest.mark.parametrize("make", [synthetic, csv])
@pytest.mark.parametrize(("after", "until"), ASKS)
def test_a_feed_s_batch_holds_the_bars_of_its_bars_after(
    make: Callable[[Path], MarketFeed], after: dict[str, datetime], until: datetime, tmp_path: Path
) -> None:
    feed = make(tmp_path)
    batch = feed.batch_after(after, until)
    assert batch.symbols == tuple(after)
    assert batch.as_dict() == feed.bars_after(after, until)
    assert batch.values.dtype == np.float64 and batch.values.shape == (len(batch.times), 5)


HISTORIES = [
    (["SPY", "QQQ", "IWM"], at(12), 1),  # the latest bar of each (the broker's prices)
    (["IWM", "SPY"], at(30), 6),  # several, fewer where a symbol has gaps
    (["SPY", "QQQ"], at(-1), 1),  # before the first bar: none
    ([], at(5), 1),
]


@pytest.mark.parametrize("make", [synthetic, csv])
@pytest.mark.parametrize(("symbols", "end", "count"), HISTORIES)
def test_a_feed_s_history_batch_holds_the_bars_of_its_history(
    make: Callable[[Path], MarketFeed], symbols: list[str], end: datetime, count: int,
    tmp_path: Path,
) -> None:
    feed = make(tmp_path)
    batch = feed.history_batch(symbols, end, count)
    assert batch.symbols == tuple(symbols)
    assert batch.as_dict() == feed.history(symbols, end, count)
    assert batch.values.dtype == np.float64 and batch.values.shape == (len(batch.times), 5)


def test_a_synthetic_batch_across_a_chunk_edge_is_the_bars_of_a_fresh_feed() -> None:
    settings = SyntheticMarketSettings(seed=3, start=START)
    walked = SyntheticMarket(settings, MINUTE)
    walked.history(["SPY", "QQQ"], at(CHUNK - 3), 4)
    batch = walked.batch_after({"SPY": at(CHUNK - 3), "QQQ": at(CHUNK - 1)}, at(CHUNK + 2))
    fresh = SyntheticMarket(settings, MINUTE).history(["SPY", "QQQ"], at(CHUNK + 2), 8)
    assert batch.bars(0) == fresh["SPY"][-5:] and batch.bars(1) == fresh["QQQ"][-3:]


def test_keep_drops_rows_and_keeps_every_symbol() -> None:
    bars = {"SPY": [Bar(at(n), 1.0, 2.0, 0.5, 1.5, 10.0 * n) for n in (1, 2, 3)],
            "QQQ": [Bar(at(1), 3.0, 4.0, 2.5, 3.5, 7.0)], "IWM": []}
    batch = batch_of(bars)
    kept = batch.keep(np.array([True, False, True, False]))
    assert kept.as_dict() == {"SPY": [bars["SPY"][0], bars["SPY"][2]], "QQQ": [], "IWM": []}
    assert kept.bounds == (0, 2, 2, 2)
    assert [batch.owner(row) for row in range(4)] == [0, 0, 0, 1]


def test_an_empty_batch() -> None:
    batch = batch_of({})
    assert batch == BarBatch((), (0,), (), batch.values) and batch.values.shape == (0, 5)
    assert batch.as_dict() == {}
