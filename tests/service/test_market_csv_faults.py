"""CSV files that cannot be used at all: each is refused with the file, the line (and the
column where there is one) and what to do, as an UnusableDataError (the worker then exits
78 and the account is parked); none escapes as a raw exception, none blocks."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from service.market.base import UnusableDataError
from service.market.csv_replay import CsvMarket
from service.settings import CsvMarketSettings

MINUTE = timedelta(minutes=1)
HEADER = b"time,open,high,low,close,volume"


def row(minute: int) -> bytes:
    t = datetime(2024, 3, 1, 14, 30, tzinfo=UTC) + minute * MINUTE
    return t.isoformat().replace("+00:00", "Z").encode() + b",100,101,99,100,10"


ROWS = b"\n".join(row(m) for m in range(5))


def refusal(tmp_path: Path, content: bytes) -> UnusableDataError:
    (tmp_path / "SPY.csv").write_bytes(content)
    with capture_logs(), pytest.raises(UnusableDataError) as caught:
        CsvMarket(CsvMarketSettings(directory=tmp_path), MINUTE).preload(["SPY"])
    error = caught.value
    assert error.file == str(tmp_path / "SPY.csv") and str(error).startswith(error.file)
    return error


def served(tmp_path: Path, content: bytes) -> int:
    (tmp_path / "SPY.csv").write_bytes(content)
    feed = CsvMarket(CsvMarketSettings(directory=tmp_path), MINUTE)
    return len(feed.history(["SPY"], datetime(2024, 3, 2, tzinfo=UTC), 100)["SPY"])


@pytest.mark.parametrize(
    ("bad", "column"),
    [(b"\xe9", 37), (b"\xff\xfe", 37), (b"\xc3", 37), (b"\xed\xa0\x80", 37), (b"\x80", 37)],
)
def test_bytes_that_are_not_utf8_name_line_and_column(
    tmp_path: Path, bad: bytes, column: int
) -> None:
    error = refusal(tmp_path, HEADER + b"\n" + row(0) + b"\n" + row(1)[:36] + bad + b"\n")
    assert (error.line, error.column) == (3, column)
    assert "not UTF-8" in error.reason and "save it as UTF-8" in error.reason


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_a_utf16_or_utf32_file_is_named_as_such(tmp_path: Path, encoding: str) -> None:
    text = (HEADER + b"\n" + ROWS + b"\n").decode()
    error = refusal(tmp_path, text.encode(encoding))
    assert error.line == 1 and "save it as UTF-8" in error.reason


@pytest.mark.parametrize("where", ["header", "data"])
def test_a_nul_byte_is_refused_with_its_position(tmp_path: Path, where: str) -> None:
    content = (b"ti\0me" + HEADER[4:] + b"\n" + ROWS if where == "header"
               else HEADER + b"\n" + row(0) + b"\n" + row(1)[:5] + b"\0" + row(1)[5:])
    error = refusal(tmp_path, content)
    assert (error.line, error.column) == ((1, 3) if where == "header" else (3, 6))
    assert "NUL" in error.reason


@pytest.mark.parametrize("quoted", [False, True])
def test_a_field_over_128_kib_names_its_line(tmp_path: Path, quoted: bool) -> None:
    big = b'"' + b"1\n" * 70_000 + b'"' if quoted else b"1" * 200_000
    error = refusal(tmp_path, HEADER + b"\n" + row(0) + b"\n" + row(1)[:-2] + big + b"\n")
    assert error.line == 3 and "131072" in error.reason


def test_a_line_over_the_line_limit_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    error = refusal(tmp_path, HEADER + b"\n" + b"," * (4 << 20) + b"\n" + ROWS)
    assert error.line == 2 and "longer than" in error.reason


@pytest.mark.parametrize(
    ("content", "line", "words"),
    [
        (b"", 1, "empty"),
        (b"\n\n  \n", 1, "empty"),
        (b"\xef\xbb\xbf", 1, "empty"),
        (HEADER + b"\n", 1, "no data rows"),
        (HEADER + b"\r\n\r\n", 1, "no data rows"),
        (b"time,open,high,low,price,volume\n" + ROWS, 1, "missing column(s) close"),
        (row(0) + b"\n" + ROWS, 1, "missing column(s) time"),
        (b"time,open,open,high,low,close,volume\n" + ROWS, 1, "column open appears twice"),
    ],
)
def test_empty_header_only_and_bad_headers_name_the_line(
    tmp_path: Path, content: bytes, line: int, words: str
) -> None:
    error = refusal(tmp_path, content)
    assert error.line == line and words in error.reason, error.reason


def test_an_unsorted_file_names_the_first_line_going_backwards(tmp_path: Path) -> None:
    backwards = b"\n".join(row(m) for m in (0, 1, 2, 9, 3, 4, 8, 5, 6, 7))
    error = refusal(tmp_path, HEADER + b"\n" + backwards)
    assert error.line == 6 and "sort the file" in error.reason


def test_duplicated_times_keep_the_first_and_name_each_repeat(tmp_path: Path) -> None:
    repeated = b"\n".join(row(m // 3) for m in range(12))
    with capture_logs() as logs:
        assert served(tmp_path, HEADER + b"\n" + repeated) == 4
    lines = [e["row"] for e in logs if e["event"] == "market.row_skipped"]
    assert lines == [3, 4, 6, 7, 9, 10, 12, 13]


@pytest.mark.parametrize(
    "content",
    [
        HEADER + b"\r\n" + ROWS.replace(b"\n", b"\r\n") + b"\r\n",
        HEADER + b"\r" + ROWS.replace(b"\n", b"\r"),
        b"\xef\xbb\xbf" + HEADER + b"\n" + ROWS,
        b"\xef\xbb\xbf\xef\xbb\xbf" + HEADER + b"\n" + ROWS,
        b'\xef\xbb\xbf"time","open","high","low","close","volume"\n' + ROWS,
    ],
    ids=["crlf", "cr", "bom", "double-bom", "bom-quoted-header"],
)
def test_crlf_cr_and_a_utf8_bom_are_read(tmp_path: Path, content: bytes) -> None:
    assert served(tmp_path, content) == 5


def test_a_directory_given_as_the_csv_is_refused(tmp_path: Path) -> None:
    (tmp_path / "SPY.csv").mkdir()
    with pytest.raises(UnusableDataError, match=r"SPY\.csv: is a directory"):
        CsvMarket(CsvMarketSettings(directory=tmp_path), MINUTE).preload(["SPY"])


def test_a_fifo_given_as_the_csv_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "SPY.csv")  # nobody writes to it: opening it to read would block
    with pytest.raises(UnusableDataError, match=r"SPY\.csv: not a regular file"):
        CsvMarket(CsvMarketSettings(directory=tmp_path), MINUTE).preload(["SPY"])


def test_a_missing_file_is_unusable_data(tmp_path: Path) -> None:
    with pytest.raises(UnusableDataError, match=r"NOPE\.csv: no such file"):
        CsvMarket(CsvMarketSettings(directory=tmp_path), MINUTE).preload(["NOPE"])
