"""The validation's data, read from the checkout's tests/data (bench validate is a
developer's proof: a wheel does not ship it)."""

from __future__ import annotations

import csv
import json
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from regime_model.validation.posteriordb import TARGETS, Target

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
POSTERIORDB = DATA / "posteriordb"
SP500 = DATA / "sp500.csv"
SP500_REFERENCE = DATA / "sp500_reference.json"


def require(path: Path) -> Path:
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: `bench validate` runs from a source checkout, whose "
            "tests/data holds the validation data"
        )
    return path


def closes(path: Path = SP500, column: str = "Close") -> tuple[list[str], np.ndarray]:
    """(dates, closes) of a Yahoo-form CSV, oldest first."""
    with require(path).open(newline="") as f:
        rows = list(csv.DictReader(f))
    return [r["Date"] for r in rows], np.array([float(r[column]) for r in rows])


def _posterior_name(posterior: str) -> str:
    return posterior.partition("-")[0]


@cache
def data_block(posterior: str) -> dict[str, Any]:
    path = require(POSTERIORDB / f"{_posterior_name(posterior)}.json.zip")
    with zipfile.ZipFile(path) as archive:
        block: dict[str, Any] = json.loads(archive.read(archive.namelist()[0]))
    return block


@cache
def reference(posterior: str) -> dict[str, dict[str, float]]:
    summaries: dict[str, dict[str, dict[str, float]]] = json.loads(
        require(POSTERIORDB / "reference_summaries.json").read_text()
    )
    return summaries[posterior]


def target(posterior: str) -> Target:
    return TARGETS[posterior](data_block(posterior))
