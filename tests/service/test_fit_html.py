"""`regime-trader fit --html PATH`: one self-contained page of a fit (a short real fit)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browser import PLOTS_JS, check_plots, chromium, watch

from service.reports.fit_html import series_block

ROOT = Path(__file__).resolve().parents[2]
CHAINS, DRAWS = 2, 40
CREDIT = "https://github.com/leeoniya/uPlot"  # uPlot's credit comment: the only URL


def fit(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "service.cli", "fit", "--csv", "tests/data/sp500.csv",
               "--column", "Close", "--from", "2008-09-01", "--to", "2008-11-30",
               "--chains", str(CHAINS), "--draws", str(DRAWS), "--warmup", "40", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)


FitPage = tuple[str, dict[str, Any], str, Path]  # the page, its data, fit's stdout, its file


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> FitPage:
    path = tmp_path_factory.mktemp("fit") / "fit.html"
    done = fit("--json", "--html", str(path))
    assert done.returncode == 0, done.stderr[-3000:]
    text = path.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="regime-data">(.*?)</script>', text,
                      re.S)
    assert found
    return text, json.loads(found.group(1)), done.stdout, path


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for this module (tests/browser.py)."""
    with chromium() as launched:
        yield launched


def test_the_page_holds_the_series_posteriors_and_diagnostics(page: FitPage) -> None:
    text, data, stdout, _ = page
    assert json.loads(stdout)["parameters"]  # --json still prints the report alone
    assert data["kind"] == "fit" and "RegimeCharts.renderFit(" in text
    series = data["series"]
    assert series["time_axis"] == "time" and len(series["smoothed"]) == 2
    assert len(series["x"]) == len(series["price"]) == len(series["smoothed"][0])
    assert np.allclose(np.sum(series["smoothed"], axis=0), 1.0, atol=1e-3)
    names = [p["name"] for p in data["posteriors"]]
    assert names == ["mu[1]", "mu[2]", "sigma[1]", "sigma[2]", "P[1,1]", "P[1,2]", "P[2,1]",
                     "P[2,2]"]
    for posterior in data["posteriors"]:
        assert sum(posterior["counts"]) == CHAINS * DRAWS
        assert posterior["q5"] <= posterior["mean"] <= posterior["q95"]
    assert [r[0] for r in data["parameters"]["rows"]] == names
    diagnostics = {row[0] for row in data["diagnostics"]["rows"]}
    assert {"divergences", "worst R-hat", "lowest bulk ESS", "E-BFMI per chain"} <= diagnostics


def test_the_page_refers_to_nothing_outside(page: FitPage) -> None:
    text = page[0]
    assert set(re.findall(r"https?://[^\s\"'<>)]+", text)) <= {CREDIT}
    for reference in ("src=", "href=", "url(", "@import", "<link", "fetch("):
        assert reference not in text, reference


def test_the_page_draws_in_a_browser(page: FitPage, browser: Any) -> None:
    """The page from its file: no error; every chart has data and axes that read right."""
    tab = browser.new_page(viewport={"width": 1280, "height": 1000})
    problems = watch(tab)
    tab.goto(page[3].as_uri())
    plots = tab.evaluate(PLOTS_JS, tab.locator("#regime-charts").element_handle())
    check_plots(plots)
    assert len(plots) == 2 + 8  # price, probabilities; a histogram per parameter
    assert plots[0]["points"] == len(page[1]["series"]["x"])
    assert [p["title"].split()[0] for p in plots[2:]] == [p["name"] for p in page[1]["posteriors"]]
    assert all(label.endswith("%") for label in plots[1]["yLabels"])
    tab.close()
    assert problems == [], problems


def test_labels_that_are_not_dates_give_an_index_axis() -> None:
    block = series_block(["a", "b", "c"], [1.0, 2.0, 3.0], np.array([[0.2, 0.8], [0.5, 0.5]]))
    assert block["time_axis"] == "index" and block["x"] == [1, 2]
    assert block["price"] == [2.0, 3.0] and block["smoothed"] == [[0.2, 0.5], [0.8, 0.5]]


def test_an_unwritable_page_is_said_with_exit_73(tmp_path: Path) -> None:
    done = fit("--draws", "10", "--warmup", "10", "--html", str(tmp_path / "no" / "fit.html"))
    assert done.returncode == 73 and "cannot write" in done.stderr
    assert "parameter" in done.stdout  # the report is still printed
