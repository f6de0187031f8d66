"""The daemon replaying a user's CSV files: bad rows are skipped with the file, row and
reason; the run ends cleanly when the data does."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from conftest import DaemonProcess

START = datetime(2025, 3, 3, 14, 30, tzinfo=UTC)
ROWS = 150

SETTINGS = """
instruments_file = "instruments.toml"

[[accounts]]
name = "alpha"

[market]
kind = "csv"
interval = "1m"

[market.csv]
directory = "bars"

[clock]
mode = "fast"

[model]
window = 128

[logging]
format = "json"
"""

INSTRUMENTS = """
[accounts.alpha]
symbols = ["SPY", "QQQ"]
"""


def write_bars(path: Path, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    closes = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.001, ROWS)))
    lines = ["time,open,high,low,close,volume"]
    for i, close in enumerate(closes):
        t = (START + i * timedelta(minutes=1)).isoformat().replace("+00:00", "Z")
        lines.append(f"{t},{close:.4f},{close * 1.001:.4f},{close * 0.999:.4f},{close:.4f},1000")
    path.write_text("\n".join(lines) + "\n")
    return lines


def test_a_csv_replay_skips_bad_rows_and_ends_with_the_data(
    run_daemon: Callable[..., DaemonProcess], tmp_path: Path
) -> None:
    config = tmp_path / "config"
    (config / "bars").mkdir(parents=True)
    (config / "service.toml").write_text(SETTINGS)
    (config / "instruments.toml").write_text(INSTRUMENTS)
    write_bars(config / "bars" / "SPY.csv", seed=1)
    lines = write_bars(config / "bars" / "QQQ.csv", seed=2)
    lines[10] = lines[10].rsplit(",", 2)[0] + ",NaN,1000"  # row 11: a NaN close
    lines[20] = lines[20].replace(lines[20].split(",")[4], "0", 1)  # row 21: a zero price
    lines[30], lines[31] = lines[31], lines[30]  # row 32 goes backwards
    del lines[60:63]  # a three-bar gap
    (config / "bars" / "QQQ.csv").write_text("\n".join(lines) + "\n")

    daemon = run_daemon("run", "--config", str(config / "service.toml"),
                        "--state-dir", str(tmp_path / "state"))
    assert daemon.wait_exit() == 0, daemon.report("bad exit")
    skipped = {(e["row"], e["reason"].split(":")[0]) for e in daemon.named("market.row_skipped")}
    assert all(e["file"].endswith("QQQ.csv") for e in daemon.named("market.row_skipped"))
    assert {row for row, _ in skipped} == {11, 21, 32}
    assert daemon.named("market.gap")
    updates = daemon.named("update.completed", account="alpha")
    assert updates and updates[-1]["bar_time"].startswith("2025-03-03T16:59")
    [stopping] = daemon.named("worker.stopping")
    assert stopping["reason"] == "market data exhausted"
