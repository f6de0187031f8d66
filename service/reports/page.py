"""A self-contained HTML page: the chart code and the data inlined, nothing fetched.

The page works offline and from a file: every script and style sheet is inside it (with
the licence of what it inlines, uPlot's, as a comment in its head), and the data is a
JSON document in a <script type="application/json"> element, read by the
page's one call into RegimeCharts (service/web/charts.js).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

CONTAINER_ID, DATA_ID = "regime-charts", "regime-data"
MAX_POINTS = 5_000  # per series on a page
T = TypeVar("T")


@dataclass(frozen=True)
class PageAssets:
    """The texts a page inlines, in order (service.web.assets.page_assets reads them)."""

    scripts: tuple[str, ...]
    styles: tuple[str, ...]
    notices: tuple[str, ...] = ()  # licences of what is inlined, kept as HTML comments


def _notice(text: str) -> str:
    # An HTML comment ends at the first "-->" and may not hold "--" at all.
    if "--" in text:
        raise ValueError("a notice contains '--': it cannot be an HTML comment")
    return f"<!--\n{text.strip()}\n-->\n"


def _inlined(text: str, tag: str) -> str:
    # An HTML parser ends a <script> or <style> at the first "</tag", whatever the JS
    # around it means; our files never contain one, and must not start to.
    if f"</{tag}" in text.lower():
        raise ValueError(f"an inlined {tag} contains '</{tag}': it would end the element")
    return text


def data_json(data: Mapping[str, Any]) -> str:
    """The data as JSON safe inside <script>: "<" escaped, so no "</script>" can occur;
    NaN and Infinity refused (JSON.parse rejects them)."""
    return json.dumps(data, allow_nan=False, separators=(",", ":")).replace("<", "\\u003c")


def render_page(title: str, data: Mapping[str, Any], assets: PageAssets, call: str) -> str:
    """The page; `call` names the RegimeCharts function that draws `data` ("render" for
    an account, "renderFit" for a fit)."""
    styles = "".join(f"<style>\n{_inlined(s, 'style')}\n</style>\n" for s in assets.styles)
    scripts = "".join(f"<script>\n{_inlined(s, 'script')}\n</script>\n" for s in assets.scripts)
    notices = "".join(_notice(n) for n in assets.notices)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
{notices}{styles}</head>
<body>
<h1>{html.escape(title)}</h1>
<div id="{CONTAINER_ID}"><noscript>The charts and tables of this page are drawn by
JavaScript inlined in it; open it in a browser with JavaScript on.</noscript></div>
<script type="application/json" id="{DATA_ID}">{data_json(data)}</script>
{scripts}<script>
RegimeCharts.{call}(document.getElementById("{CONTAINER_ID}"),
  JSON.parse(document.getElementById("{DATA_ID}").textContent));
</script>
</body>
</html>
"""


def thin(values: Sequence[T], limit: int = MAX_POINTS) -> list[T]:
    """Every k-th value, k the smallest stride that keeps at most `limit`, the last always
    kept: a year of minute bars stays a page of a few MB."""
    if len(values) <= limit:
        return list(values)
    stride = -(-len(values) // (limit - 1))
    kept = list(values[::stride])
    return kept if (len(values) - 1) % stride == 0 else [*kept, values[-1]]
