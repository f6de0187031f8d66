"""One price column of a CSV, as `fit` and `bench regime-change` read it: the column
matched whatever its case (Yahoo's files say Close), optionally a window of dates."""

from __future__ import annotations

import csv
import math
from datetime import date
from pathlib import Path


def read_prices(
    path: Path, column: str, start: date | None = None, end: date | None = None
) -> tuple[list[str], list[float]]:
    """(first-column labels, prices) of the rows whose price is a positive number; the
    column matched whatever its case; with `start`/`end`, the rows dated within them."""
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        names = {name.strip().lower(): name for name in reader.fieldnames or []}
        if column.lower() not in names:
            raise ValueError(f"{path}: no column {column!r}; columns are {reader.fieldnames}")
        first, price = (reader.fieldnames or [""])[0], names[column.lower()]
        rows = [(r[first], float(r[price])) for r in reader if (r[price] or "").strip()]
    rows = [(t, p) for t, p in rows if math.isfinite(p) and p > 0]
    if start or end:
        rows = [(t, p) for t, p in rows if _within(path, t, start, end)]
    return [t for t, _ in rows], [p for _, p in rows]


def _within(path: Path, label: str, start: date | None, end: date | None) -> bool:
    try:
        day = date.fromisoformat(label.strip()[:10])
    except ValueError:
        problem = f"--from/--to need dates in the first column, found {label!r}"
        raise ValueError(f"{path}: {problem}") from None
    return (start is None or day >= start) and (end is None or day <= end)
