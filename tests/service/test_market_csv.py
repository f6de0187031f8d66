"""CSV replay: users' files are validated row by row, bad rows are skipped with a warning
that names the file, the row and why; unusable files are refused with what to do."""

from __future__ import annotations

from collections.abc import MutableMapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from service.market.base import MarketDataError
from service.market.csv_replay import CsvMarket, parse_time
from service.settings import CsvMarketSettings

MINUTE = timedelta(minutes=1)
HEADER = "time,open,high,low,close,volume"


def t(minute: int) -> datetime:
    return datetime(2024, 3, 1, 14, 30, tzinfo=UTC) + minute * MINUTE


def row(minute: int, close: float = 100.0, volume: float = 10.0) -> str:
    return f"{t(minute).isoformat().replace('+00:00', 'Z')},100,101,99,{close},{volume}"


def write(tmp_path: Path, symbol: str, *lines: str) -> Path:
    path = tmp_path / f"{symbol}.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def market(tmp_path: Path, **overrides: Any) -> CsvMarket:
    return CsvMarket(CsvMarketSettings(directory=tmp_path, **overrides), MINUTE)


def skipped(logs: list[MutableMapping[str, Any]]) -> list[tuple[int, str]]:
    return [(e["row"], e["reason"]) for e in logs if e["event"] == "market.row_skipped"]


def test_a_clean_file_is_served_by_history_and_bars_after(tmp_path: Path) -> None:
    write(tmp_path, "SPY", HEADER, *(row(m, close=100 + m / 10) for m in range(10)))
    feed = market(tmp_path)
    last3 = feed.history(["SPY"], t(5) + timedelta(seconds=30), 3)["SPY"]
    assert [b.time for b in last3] == [t(3), t(4), t(5)]
    assert [b.close for b in last3] == [100.3, 100.4, 100.5]
    after = feed.bars_after({"SPY": t(7)}, t(100))["SPY"]
    assert [b.time for b in after] == [t(8), t(9)]
    assert feed.history(["SPY"], t(-1), 5) == {"SPY": []}
    assert feed.bars_after({"SPY": t(9)}, t(100)) == {"SPY": []}
    assert feed.history(["SPY"], t(1), 10)["SPY"][0].time == t(0)


def test_first_bar_is_the_latest_start_and_last_bar_the_latest_end(tmp_path: Path) -> None:
    write(tmp_path, "SPY", HEADER, *(row(m) for m in range(0, 5)))
    write(tmp_path, "QQQ", HEADER, *(row(m) for m in range(2, 4)))
    feed = market(tmp_path)
    assert feed.first_bar_time(["SPY", "QQQ"]) == t(2)
    assert feed.last_bar_time(["SPY", "QQQ"]) == t(4)


def test_each_bad_row_is_skipped_with_file_row_and_reason(tmp_path: Path) -> None:
    path = write(
        tmp_path, "SPY", HEADER,
        row(0),                                  # row 2: fine
        "yesterday,100,101,99,100,10",           # row 3
        f"{t(1).isoformat()},100,101,99,,10",    # row 4: empty close
        f"{t(1).isoformat()},100,101,99,abc,10", # row 5
        f"{t(1).isoformat()},100,101,99,nan,10", # row 6
        f"{t(1).isoformat()},0,101,99,100,10",   # row 7
        f"{t(1).isoformat()},100,98,99,98.5,10", # row 8: high < low
        f"{t(1).isoformat()},100,101,99,102,10", # row 9: close above high
        row(1),                                  # row 10: fine
        row(1, close=100.5),                     # row 11: duplicate
        "2024-03-01T14:33:00,100,101,99,100,10", # row 12: naive
        f"{t(2).isoformat()},100,101",           # row 13: short
        f"{t(2).isoformat()},100,101,99,100,-1", # row 14: negative volume
        row(2),                                  # row 15: fine
    )
    with capture_logs() as logs:
        bars = market(tmp_path).history(["SPY"], t(10), 10)["SPY"]
    assert [b.time for b in bars] == [t(0), t(1), t(2)]
    assert bars[1].close == 100.0  # the first of the duplicates is kept
    assert all(e["file"] == str(path) and e["log_level"] == "warning"
               for e in logs if e["event"] == "market.row_skipped")
    assert skipped(logs) == [
        (3, "unparseable timestamp: 'yesterday'"),
        (4, "empty close"),
        (5, "non-numeric close: 'abc'"),
        (6, "non-finite close: 'nan'"),
        (7, "non-positive open: 0.0"),
        (8, "high below low: 98.0 < 99.0"),
        (9, "close outside [low, high]: 102.0 not in [99.0, 101.0]"),
        (11, "duplicate timestamp: first kept at row 10"),
        (12, "naive timestamp: '2024-03-01T14:33:00' (add 'Z' or set naive_is_utc)"),
        (13, "short row: 3 fields, the header needs 6"),
        (14, "negative volume: -1.0"),
    ]


def test_a_few_rows_going_backwards_are_skipped(tmp_path: Path) -> None:
    minutes = [*range(0, 30), 12, *range(30, 40)]
    write(tmp_path, "SPY", HEADER, *(row(m) for m in minutes))
    with capture_logs() as logs:
        bars = market(tmp_path).history(["SPY"], t(100), 100)["SPY"]
    assert [b.time for b in bars] == [t(m) for m in range(40)]
    (row_no, reason), = skipped(logs)
    assert row_no == 32 and reason.startswith("timestamp goes backwards")


def test_an_unsorted_file_is_refused_with_a_request_to_sort_it(tmp_path: Path) -> None:
    write(tmp_path, "SPY", HEADER, *(row(m) for m in reversed(range(20))))
    with pytest.raises(MarketDataError, match=r"SPY.csv: 19 of 20 rows go backwards.*sort"):
        market(tmp_path).preload(["SPY"])


def test_gaps_are_kept_and_logged_once_each(tmp_path: Path) -> None:
    path = write(tmp_path, "SPY", HEADER, row(0), row(1), row(5), row(6), row(8))
    with capture_logs() as logs:
        bars = market(tmp_path).history(["SPY"], t(10), 10)["SPY"]
    assert [b.time for b in bars] == [t(0), t(1), t(5), t(6), t(8)]
    gaps = [(e["file"], e["row"], e["missing_bars"]) for e in logs if e["event"] == "market.gap"]
    assert gaps == [(str(path), 4, 3), (str(path), 6, 1)]


def test_files_are_read_once(tmp_path: Path) -> None:
    path = write(tmp_path, "SPY", HEADER, row(0), row(1))
    feed = market(tmp_path)
    feed.preload(["SPY"])
    path.unlink()
    assert len(feed.history(["SPY"], t(1), 5)["SPY"]) == 2


def test_a_missing_file_names_the_file_and_the_naming_rule(tmp_path: Path) -> None:
    with pytest.raises(MarketDataError, match=r"NOPE.csv: no such file.*<SYMBOL>.csv"):
        market(tmp_path).history(["NOPE"], t(0), 1)


def test_a_missing_column_names_the_column_and_the_setting(tmp_path: Path) -> None:
    write(tmp_path, "SPY", "time,open,high,low,price,volume", row(0))
    with pytest.raises(MarketDataError, match=r"missing column\(s\) close.*_column settings"):
        market(tmp_path).preload(["SPY"])


def test_a_file_without_valid_rows_is_refused_with_the_main_reasons(tmp_path: Path) -> None:
    write(tmp_path, "SPY", HEADER, "2024-03-01T14:30:00,1,1,1,1,1", "x,1,1,1,1,1")
    with capture_logs(), pytest.raises(
        MarketDataError, match=r"no valid rows \(2 data rows; skipped: naive timestamp x1"
    ):
        market(tmp_path).preload(["SPY"])
    write(tmp_path, "QQQ", "")
    with pytest.raises(MarketDataError, match=r"QQQ\.csv: the file is empty"):
        market(tmp_path).preload(["QQQ"])


def test_custom_column_names_and_naive_utc_timestamps(tmp_path: Path) -> None:
    write(tmp_path, "SPY", "Date,O,H,L,C,V,extra",
          "2024-03-01 14:30:00,100,101,99,100.5,7,x")
    feed = market(tmp_path, time_column="Date", open_column="O", high_column="H",
                  low_column="L", close_column="C", volume_column="V", naive_is_utc=True)
    (bar,) = feed.history(["SPY"], t(0), 1)["SPY"]
    assert (bar.time, bar.open, bar.high, bar.low, bar.close, bar.volume) == (
        t(0), 100.0, 101.0, 99.0, 100.5, 7.0)


def test_daily_bars_with_plain_dates_are_utc_midnight(tmp_path: Path) -> None:
    write(tmp_path, "SPY", HEADER, "2024-03-01,1,2,1,2,5", "2024-03-04,2,3,2,3,5")
    with capture_logs() as logs:
        feed = CsvMarket(CsvMarketSettings(directory=tmp_path), timedelta(days=1))
        times = [b.time for b in feed.history(["SPY"], datetime(2024, 3, 9, tzinfo=UTC), 9)["SPY"]]
    assert times == [datetime(2024, 3, 1, tzinfo=UTC), datetime(2024, 3, 4, tzinfo=UTC)]
    assert [e["missing_bars"] for e in logs if e["event"] == "market.gap"] == [2]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-03-01T14:30:00Z", t(0)),
        ("2024-03-01T14:30:00+00:00", t(0)),
        ("2024-03-01T09:30:00-05:00", t(0)),
        ("2024-03-01 14:30:00.000Z", t(0)),
        ("2024-03-01", datetime(2024, 3, 1, tzinfo=UTC)),
    ],
)
def test_timestamps_with_a_timezone_or_plain_dates_are_read_as_utc(
    text: str, expected: datetime
) -> None:
    parsed = parse_time(text, naive_is_utc=False)
    assert parsed == expected and parsed.tzinfo is UTC


def test_the_feed_refuses_a_non_positive_interval(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="interval must be positive"):
        CsvMarket(CsvMarketSettings(directory=tmp_path), timedelta(0))
