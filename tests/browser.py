"""Headless Chromium for the tests that open a page: Debian's `chromium`, driven by
playwright with `executable_path` (no browser is downloaded).

Without Chromium or playwright a test that asks for one is skipped, except under CI (`CI`
set), where it FAILS: CI installs both (.ci/run: `apt-get install chromium
chromium-driver`; the `test` extra has playwright).

Imported as `browser` by test modules in any folder (tests/ is on sys.path: tests/conftest.py
lives there and tests/ has no __init__.py, as tests/http/ must not have one).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = Path(os.environ.get("REGIME_TRADER_CHROMIUM", "/usr/bin/chromium"))

# What RegimeCharts drew in a container, through its public accessor RegimeCharts.plots:
# per uPlot instance its title, its x values' count, each series' non-null count, and its
# y axis (uPlot 1.6.31's fields: the tick labels it drew, the width it gave them and the
# width the widest needs in the axis' font).
PLOTS_JS = """container => RegimeCharts.plots(container).map(p => {
  const axis = p.axes[1], ctx = document.createElement('canvas').getContext('2d');
  ctx.font = axis.font[0];
  const labels = (axis._values || []).filter(v => v != null && v !== '').map(String);
  const ratio = uPlot.pxRatio || window.devicePixelRatio || 1;
  return {
    title: (p.root.querySelector('.u-title') || {}).textContent || '',
    points: p.data[0].length,
    filled: p.data.slice(1).map(c => c.filter(v => v != null).length),
    yLabels: labels,
    yRoom: axis._size - axis.ticks.size - axis.gap,
    yNeeds: Math.max(0, ...labels.map(v => ctx.measureText(v).width / ratio)),
  };
})"""


def browser_available() -> None:
    """Skip (fail under CI) when Chromium or playwright is missing."""
    missing = []
    if importlib.util.find_spec("playwright") is None:
        missing.append("python playwright (pip install -e '.[test]')")
    if not CHROMIUM.exists():
        missing.append(f"{CHROMIUM} (apt-get install chromium chromium-driver)")
    if missing:
        why = "no browser for the browser tests: " + "; ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(why + " (CI must run it: .ci/run installs both)")
        pytest.skip(why)


@contextmanager
def chromium() -> Iterator[Browser]:
    """One headless Chromium, closed after (skips or fails first, as above)."""
    browser_available()
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - after the check

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


def watch(page: Page) -> list[str]:
    """The page's problems, as they come: console errors, page errors, failed requests."""
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)  # fmt: skip
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    return problems


def check_plots(plots: list[dict[str, Any]]) -> None:
    """Every chart has data, and its y axis' tick labels are distinct and fit its width."""
    assert plots, "no chart drawn"
    for p in plots:
        assert p["points"] >= 1 and p["filled"] and min(p["filled"]) >= 1, p
        assert p["yLabels"] and len(set(p["yLabels"])) == len(p["yLabels"]), p
        assert p["yNeeds"] <= p["yRoom"] + 0.5, p
