"""The dashboard's files (static/, beside this module) and the chart files of service/web,
read through importlib.resources so an installed wheel serves them as a checkout does.

Only the names listed here are served: no part of a request's path reaches the file
system, so `/static/../anything` is simply not found.
"""

from __future__ import annotations

from importlib.resources import files

from service.http.types import Reply
from service.web.assets import ASSETS, asset_bytes, content_type

STATIC_PREFIX = "/static/"
OWN: dict[str, str] = {
    "dashboard.html": "text/html; charset=utf-8",
    "dashboard.js": "text/javascript; charset=utf-8",
    "dashboard.css": "text/css; charset=utf-8",
}


def static_file(name: str) -> Reply | None:
    """(200, content type, bytes) of a served file; None for any other name."""
    if name in OWN:
        return 200, OWN[name], files("service.http").joinpath("static", name).read_bytes()
    if name in ASSETS:  # uPlot, its licence and our charts (service/web)
        return 200, content_type(name), asset_bytes(name)
    return None
