"""The daemon replaying a user's CSV files: bad rows are skipped with the file, row and
reason; the run ends cleanly when the data does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from conftest import DaemonProcess
from csv_bars import csv_settings, write_walk

ROWS = 150

SETTINGS = csv_settings(window=128)

INSTRUMENTS = """
[accounts.alpha]
symbols = ["SPY", "QQQ"]
"""


def write_bars(path: Path, seed: int) -> list[str]:
    return write_walk(path, seed, ROWS)


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


TWO_ACCOUNTS = SETTINGS.replace('[[accounts]]\nname = "alpha"\n',
                                '[[accounts]]\nname = "alpha"\n\n[[accounts]]\nname = "beta"\n')


def test_an_unusable_csv_parks_its_account_and_stop_after_still_ends_the_run(
    run_daemon: Callable[..., DaemonProcess], tmp_path: Path
) -> None:
    """A bad data file is a configuration problem: the worker says which file, line and
    why, exits 78, the account is parked (no restart loop), the other account trades to
    --stop-after, and the service ends with 78 (every account finished or parked)."""
    config = tmp_path / "config"
    (config / "bars").mkdir(parents=True)
    (config / "service.toml").write_text(TWO_ACCOUNTS)
    (config / "instruments.toml").write_text(
        '[accounts.alpha]\nsymbols = ["BAD"]\n\n[accounts.beta]\nsymbols = ["SPY"]\n')
    write_bars(config / "bars" / "SPY.csv", seed=1)
    lines = write_bars(config / "bars" / "BAD.csv", seed=2)
    lines[7] += "\xe9"  # line 8: latin-1, not UTF-8
    (config / "bars" / "BAD.csv").write_bytes("\n".join(lines).encode("latin-1"))

    daemon = run_daemon("run", "--config", str(config / "service.toml"),
                        "--state-dir", str(tmp_path / "state"), "--stop-after", "3")
    assert daemon.wait_exit() == 78, daemon.report("bad exit")
    [unusable] = daemon.named("market.unusable", account="alpha")
    assert unusable["file"].endswith("BAD.csv") and unusable["line"] == 8
    assert unusable["column"] == len(lines[7]) and "not UTF-8" in unusable["reason"]
    [parked] = daemon.named("account.parked", account="alpha")
    assert parked["exit_code"] == 78 and not daemon.named("worker.restarted")
    assert [e["seq"] for e in daemon.named("update.completed", account="beta")] == [1, 2, 3]
