"""`regime-trader report` and the backtest summary, on the state of ONE short real run: the
daemon replaying two small CSV files to their end (a fast clock, the numpy reference)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from service.cli import main
from service.state.history import read_equity_history, read_orders
from service.web.assets import ASSETS, asset_text

ROOT = Path(__file__).resolve().parents[2]
START = datetime(2025, 3, 3, 14, 30, tzinfo=UTC)
ROWS = 40  # with a window of 32: a handful of updates, a few seconds
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
window = 32
chains = 4
backend = "numpy"
extend_max = 0

[logging]
format = "json"
"""
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
    rng = np.random.default_rng(seed)
    closes = 100.0 * np.exp(np.cumsum(rng.normal(0.0, 0.001, ROWS)))
    lines = ["time,open,high,low,close,volume"] + [
        f"{(START + i * timedelta(minutes=1)).isoformat()},{c:.4f},{c * 1.001:.4f},"
        f"{c * 0.999:.4f},{c:.4f},1000"
        for i, c in enumerate(closes)
    ]
    path.write_text("\n".join(lines) + "\n")


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
    for name in ASSETS:  # uPlot and our chart code, inlined whole
        assert asset_text(name) in page, name
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


# charts.js against a stand-in for uPlot that checks what it is given (a browser is not
# among the test dependencies): every chart gets as many series as data arrays, of one
# length, bands name real series; a second render destroys the first one's charts.
HARNESS = r"""
const fs = require("fs"), vm = require("vm");
const [chartsPath, dataPath] = process.argv.slice(2);
function node(tag) {
  return { tag, children: [], get firstChild() { return this.children[0] || null; },
    appendChild(c) { this.children.push(c); return c; },
    removeChild(c) { this.children.splice(this.children.indexOf(c), 1); } };
}
let made = 0, destroyed = 0;
function uPlot(opts, data, target) {
  if (opts.series.length !== data.length) throw new Error(opts.title + ": series/data");
  data.forEach(d => { if (d.length !== data[0].length) throw new Error(opts.title + ": length"); });
  (opts.bands || []).forEach(b => b.series.forEach(i => {
    if (i < 1 || i >= data.length) throw new Error(opts.title + ": band"); }));
  this.height = opts.height; this.destroy = () => destroyed++; this.setSize = () => {};
  made++; target.appendChild(node("canvas"));
}
uPlot.tzDate = d => d;
uPlot.paths = { stepped: () => null, bars: () => null };
const listeners = [];
const window = { addEventListener: (t, f) => listeners.push(f),
  removeEventListener: (t, f) => listeners.splice(listeners.indexOf(f), 1) };
vm.runInContext(fs.readFileSync(chartsPath, "utf8"),
  vm.createContext({ window, uPlot, document: { createElement: node } }));
const data = JSON.parse(fs.readFileSync(dataPath, "utf8"));
const container = node("div");
const call = data.kind === "fit" ? "renderFit" : "render";
const first = window.RegimeCharts[call](container, data);
const second = window.RegimeCharts[call](container, data);
listeners.forEach(f => f());
console.log(JSON.stringify({ first, second, made, destroyed, listeners: listeners.length,
  roots: container.children.length }));
"""


def draw_with_node(data: dict[str, Any], folder: Path) -> dict[str, int]:
    """Run charts.js on `data` twice under node (skips the test without node)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: charts.js is not run")
    (folder / "harness.js").write_text(HARNESS)
    (folder / "data.json").write_text(json.dumps(data))
    charts = ROOT / "service" / "web" / "charts.js"
    command = [node, str(folder / "harness.js"), str(charts), str(folder / "data.json")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    result: dict[str, int] = json.loads(done.stdout)
    return result


def test_charts_js_draws_every_chart_and_redraws_in_place(
    backtest: Backtest, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(report(backtest, "--account", "alpha", "--out", str(tmp_path / "r.html"))) == 0
    drawn = draw_with_node(page_data((tmp_path / "r.html").read_text()), tmp_path)
    assert drawn["first"] == 2 + 2 * 2  # equity, drawdown; per instrument price, probability
    assert drawn == {"first": 6, "second": 6, "made": 12, "destroyed": 6, "listeners": 1,
                     "roots": 1}  # fmt: skip
