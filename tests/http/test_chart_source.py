"""`/api/charts`'s source keeps one object per account until the account's database moves
on, whoever asks and whatever a worker last reported: the page learns an update's seq from
`/api/status` (a database read), so charts answered after it must be at least that new.

One real account database, written by the daemon replaying a CSV file (the numpy
reference, a fast clock) for a few updates, then resumed for the rest of the file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from csv_bars import csv_settings, write_walk

from service.http.chart_source import ChartSource
from service.state.reader import last_seq

ROOT = Path(__file__).resolve().parents[2]
ROWS = 36  # a window of 32: five updates, two in the first run


def run_daemon(config: Path, state: Path, *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "run", "--config", str(config),
         "--state-dir", str(state), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_charts_follow_the_database_not_the_first_read(tmp_path: Path) -> None:
    config = tmp_path / "config" / "service.toml"
    (config.parent / "bars").mkdir(parents=True)
    config.write_text(csv_settings(window=32, model='backend = "numpy"\n'))
    (config.parent / "instruments.toml").write_text('[accounts.alpha]\nsymbols = ["SPY"]\n')
    write_walk(config.parent / "bars" / "SPY.csv", seed=3, rows=ROWS)
    database = tmp_path / "state" / "alpha.sqlite"
    source = ChartSource(lambda account: tmp_path / "state" / f"{account}.sqlite")
    assert source.data("alpha")["kind"] == "pending"  # no database yet

    run_daemon(config, tmp_path / "state", "--stop-after", "2")
    first = source.data("alpha")
    assert first["kind"] == "account" and len(first["equity"]["t"]) == last_seq(database) == 2
    assert source.data("alpha") is first  # kept while the database stands still

    run_daemon(config, tmp_path / "state")  # resumed to the end of the file
    after = source.data("alpha")
    assert len(after["equity"]["t"]) == last_seq(database) > 2
    assert after["equity"]["t"][-1] > first["equity"]["t"][-1]  # the new bars are there
