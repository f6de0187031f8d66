"""A one-account CSV replay for tests: its service.toml and random-walk bar files."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from service.bench.daemon_harness import LIGHT_EFFORT

START = datetime(2025, 3, 3, 14, 30, tzinfo=UTC)


def csv_settings(window: int, model: str = "") -> str:
    """service.toml: account alpha on the CSV files in `bars/`, fast clock; `model` adds
    lines to [model]."""
    return f"""
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
window = {window}
{LIGHT_EFFORT}{model}
[logging]
format = "json"
"""


def write_walk(path: Path, seed: int, rows: int) -> list[str]:
    """`rows` one-minute bars of a random walk from START, in UTC ("Z"); the file's lines."""
    closes = 100.0 * np.exp(np.cumsum(np.random.default_rng(seed).normal(0.0, 0.001, rows)))
    lines = ["time,open,high,low,close,volume"]
    for i, close in enumerate(closes):
        t = (START + i * timedelta(minutes=1)).isoformat().replace("+00:00", "Z")
        lines.append(f"{t},{close:.4f},{close * 1.001:.4f},{close * 0.999:.4f},{close:.4f},1000")
    path.write_text("\n".join(lines) + "\n")
    return lines
