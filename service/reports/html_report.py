"""`regime-trader report`: one account's self-contained HTML page.

The page is service.reports.page's shell around the account's chart data
(service.web.chart_data) and the chart code (service.web.assets): uPlot, charts.js and
the data are inlined, so the file opens offline and refers to no other file or URL.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

from service.reports.page import PageAssets, render_page


def report_title(account: str) -> str:
    return f"regime-trader report: account {account}"


def render_report(data: Mapping[str, Any], assets: PageAssets) -> str:
    """The page of one account's chart data (service.web.chart_data's shape)."""
    return render_page(report_title(str(data["account"])), data, assets, "render")


def default_report_path(account: str, today: date) -> Path:
    """report-<account>-<date>.html in the current directory (account names are safe file
    names: a letter, then letters, digits, '-' or '_')."""
    return Path(f"report-{account}-{today.isoformat()}.html")
