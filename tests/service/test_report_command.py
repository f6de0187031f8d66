"""`regime-trader report` and the backtest summary, on the state of ONE short real run: the
daemon replaying two small CSV files to their end (a fast clock, the numpy reference).
The report's page is also opened in headless Chromium (tests/browser.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from browser import PLOTS_JS, check_plots, chromium, watch
from csv_bars import csv_settings, write_walk

from service.cli import main
from service.state.history import read_equity_history, read_orders
from service.web.assets import PAGE_NOTICES, PAGE_SCRIPTS, PAGE_STYLES, asset_text

ROOT = Path(__file__).resolve().parents[2]
ROWS = 40  # with a window of 32: a handful of updates, a few seconds
SETTINGS = csv_settings(window=32, model='chains = 4\nbackend = "numpy"\n')
FIGURES = {"total_return", "cagr", "sharpe", "sortino", "max_drawdown", "max_drawdown_peak",
           "max_drawdown_trough", "max_drawdown_recovery", "turnover", "costs", "trades",
           "hit_rate"}  # fmt: skip
# The only URL a page may hold: the credit line at the top of uPlot's own file, a comment.
CREDIT = "https://github.com/leeoniya/uPlot"


@dataclass(frozen=True)
class Backtest:
    config: Path
    state: Path
    events: list[dict[str, Any]]
    stderr: str


def write_bars(path: Path, seed: int) -> None:
    write_walk(path, seed, ROWS)


@pytest.fixture(scope="module")
def backtest(tmp_path_factory: pytest.TempPathFactory) -> Backtest:
    folder = tmp_path_factory.mktemp("backtest")
    (folder / "config" / "bars").mkdir(parents=True)
    config = folder / "config" / "service.toml"
    config.write_text(SETTINGS)
    (config.parent / "instruments.toml").write_text('[accounts.alpha]\nsymbols = ["SPY", "QQQ"]\n')
    write_bars(config.parent / "bars" / "SPY.csv", seed=1)
    write_bars(config.parent / "bars" / "QQQ.csv", seed=2)
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "run", "--config", str(config),
         "--state-dir", str(folder / "state")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return Backtest(config, folder / "state", events, done.stderr)


def report(backtest: Backtest, *args: str) -> list[str]:
    return ["report", "--config", str(backtest.config), "--state-dir", str(backtest.state),
            *args]  # fmt: skip


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    yield tmp_path


def test_a_finished_backtest_prints_and_logs_its_summary(backtest: Backtest) -> None:
    assert "summary of account alpha" in backtest.stderr
    for row in ("total return", "CAGR", "Sharpe", "maximum drawdown", "hit rate", "buy & hold"):
        assert row in backtest.stderr
    [event] = [e for e in backtest.events if e.get("event") == "backtest.summary"]
    assert event["account"] == "alpha" and event.keys() >= FIGURES | {"time_in_regime"}
    assert event["buy_and_hold"].keys() >= FIGURES
    assert event["bars"] == len([e for e in backtest.events if e["event"] == "update.completed"])


def test_report_json_has_every_figure_and_agrees_with_the_database(
    backtest: Backtest, capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    assert main(report(backtest, "--account", "alpha", "--json")) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures.keys() >= FIGURES | {"time_in_regime", "buy_and_hold"}
    assert figures["buy_and_hold"].keys() >= FIGURES
    database = backtest.state / "alpha.sqlite"
    equity = [p.equity for p in read_equity_history(database)]
    assert figures["bars"] == len(equity)
    assert figures["total_return"] == pytest.approx(equity[-1] / equity[0] - 1)
    assert figures["trades"] == sum(1 for o in read_orders(database) if o.filled_qty > 0)
    assert figures["costs"] == 0.0 and sum(figures["time_in_regime"].values()) == pytest.approx(1)
    assert not list(in_tmp.iterdir())  # --json alone writes no page
    [event] = [e for e in backtest.events if e.get("event") == "backtest.summary"]
    assert {k: event[k] for k in figures} == figures  # the same figures as the run's end


def page_data(page: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="regime-data">(.*?)</script>', page,
                      re.S)  # fmt: skip
    assert found, "no inlined data"
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_the_report_is_one_self_contained_page(
    backtest: Backtest, capsys: pytest.CaptureFixture[str], in_tmp: Path
) -> None:
    assert main(report(backtest, "--account", "alpha")) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path.name == f"report-alpha-{datetime.now(UTC).date().isoformat()}.html"
    page = (in_tmp / path).read_text(encoding="utf-8")
    assert set(re.findall(r"https?://[^\s\"'<>)]+", page)) <= {CREDIT}
    for reference in ("src=", "href=", "url(", "@import", "<link", "fetch(", "XMLHttpRequest"):
        assert reference not in page, reference
    for name in PAGE_SCRIPTS + PAGE_STYLES:  # uPlot and our chart code, inlined whole
        assert asset_text(name) in page, name
    for name in PAGE_NOTICES:  # uPlot's licence, as a comment
        assert f"<!--\n{asset_text(name).strip()}\n-->" in page, name
    data = page_data(page)
    assert data["account"] == "alpha" and "RegimeCharts.render(" in page
    assert len(data["equity"]["t"]) == data["figures"]["bars"] == len(data["equity"]["buy_hold"])
    assert max(data["equity"]["drawdown"]) <= 0.0
    assert [i["symbol"] for i in data["instruments"]] == ["QQQ", "SPY"]
    for inst in data["instruments"]:
        for lo, p, hi in zip(inst["p_lo"], inst["p_turbulent"], inst["p_hi"], strict=True):
            assert 0.0 <= lo <= p <= hi <= 1.0
        assert set(inst["converged"]) <= {0, 1}
    assert data["summary"]["columns"] == ["figure", "strategy", "buy & hold"]
    assert len(data["positions"]["rows"]) == 2 and data["orders"]["rows"]


def test_report_errors_say_what_was_wrong(
    backtest: Backtest, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(report(backtest, "--account", "gamma")) == 64
    assert "unknown account 'gamma'" in capsys.readouterr().err
    empty = ["report", "--config", str(backtest.config), "--state-dir", str(tmp_path / "none"),
             "--account", "alpha"]  # fmt: skip
    assert main(empty) == 66
    assert "has no state yet" in capsys.readouterr().err
    unwritable = report(backtest, "--account", "alpha", "--out", str(tmp_path / "no" / "r.html"))
    assert main(unwritable) == 73
    assert "cannot write the report" in capsys.readouterr().err


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for this module's pages (tests/browser.py)."""
    with chromium() as launched:
        yield launched


# The report's summary table as the page shows it: one list of cells per row.
SUMMARY_JS = """() => Array.from(document.querySelectorAll('table.rc-summary tr'))
  .map(tr => Array.from(tr.cells).map(c => c.textContent))"""


def test_the_report_draws_in_a_browser(
    backtest: Backtest, browser: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The page from its file: no error, every chart has data and axes that read right,
    the summary table is there."""
    out = tmp_path / "report.html"
    assert main(report(backtest, "--account", "alpha", "--out", str(out))) == 0
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    problems = watch(page)
    page.goto(out.as_uri())
    container = page.locator("#regime-charts").element_handle()
    plots = page.evaluate(PLOTS_JS, container)
    check_plots(plots)
    data = page_data(out.read_text(encoding="utf-8"))
    assert [p["title"] for p in plots] == [
        "Equity beside buy-and-hold", "Drawdown", "QQQ: close",
        "QQQ: P(turbulent regime), band of \u00b12 sd, convergence", "SPY: close",
        "SPY: P(turbulent regime), band of \u00b12 sd, convergence"]  # fmt: skip
    assert plots[0]["points"] == len(data["equity"]["t"])
    assert all("," in label for label in plots[0]["yLabels"])  # equity near 100,000
    assert all(label.endswith("%") for p in plots[1::2] for label in p["yLabels"])
    summary = page.evaluate(SUMMARY_JS)
    assert summary[0] == ["figure", "strategy", "buy & hold"]
    assert summary[1:] == data["summary"]["rows"]
    rows = {row[0]: row[1:] for row in summary}
    assert rows["CAGR"] == ["n/a (under 30 days)"] * 2  # a run of minutes
    redrawn = page.evaluate("""box => {
      const data = JSON.parse(document.getElementById('regime-data').textContent);
      const first = RegimeCharts.plots(box);
      RegimeCharts.render(box, data);
      return {first: first.length, again: RegimeCharts.plots(box).length,
              roots: box.children.length, uplots: box.querySelectorAll('.uplot').length};
    }""", container)  # fmt: skip
    assert redrawn == {"first": 6, "again": 6, "roots": 1, "uplots": 6}  # in place
    page.close()
    assert problems == [], problems
