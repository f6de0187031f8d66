"""The browser files that ship inside the package, read through importlib.resources (so
they are found in an installed wheel as in a checkout).

ASSETS names every file the dashboard may serve, with its content type (uPlot, its
licence, our chart code); `page_assets()` is what a self-contained page inlines
(PAGE_SCRIPTS and PAGE_STYLES): uPlot first, then our chart code on top of it, and
uPlot's licence as a comment (PAGE_NOTICES).
"""

from __future__ import annotations

from importlib.resources import files

from service.reports.page import PageAssets

# served name -> (path under service/web, content type)
ASSETS: dict[str, tuple[str, str]] = {
    "uPlot.iife.min.js": ("vendor/uplot/uPlot.iife.min.js", "text/javascript; charset=utf-8"),
    "uPlot.min.css": ("vendor/uplot/uPlot.min.css", "text/css; charset=utf-8"),
    "charts.js": ("charts.js", "text/javascript; charset=utf-8"),
    "charts.css": ("charts.css", "text/css; charset=utf-8"),
    "uPlot.LICENSE": ("vendor/uplot/LICENSE", "text/plain; charset=utf-8"),
}
PAGE_SCRIPTS = ("uPlot.iife.min.js", "charts.js")  # inlined in this order
PAGE_STYLES = ("uPlot.min.css", "charts.css")
PAGE_NOTICES = ("uPlot.LICENSE",)  # MIT: the notice goes with every copy, so in each page
UPLOT_VERSION = "1.6.31"


def asset_bytes(name: str) -> bytes:
    """The bytes of one served file; KeyError for a name not in ASSETS (so no path from a
    request can reach any other file)."""
    path, _ = ASSETS[name]
    return files("service.web").joinpath(*path.split("/")).read_bytes()


def asset_text(name: str) -> str:
    return asset_bytes(name).decode("utf-8")


def content_type(name: str) -> str:
    return ASSETS[name][1]


def page_assets() -> PageAssets:
    return PageAssets(
        scripts=tuple(asset_text(name) for name in PAGE_SCRIPTS),
        styles=tuple(asset_text(name) for name in PAGE_STYLES),
        notices=tuple(asset_text(name) for name in PAGE_NOTICES),
    )
