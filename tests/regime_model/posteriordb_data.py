"""The posteriordb cases copied into tests/data/posteriordb (see its README for attribution)."""

from __future__ import annotations

import json
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

from regime_model.validation.posteriordb import TARGETS, Target

DATA = Path(__file__).resolve().parents[1] / "data" / "posteriordb"


def data_name(posterior: str) -> str:
    return posterior.partition("-")[0]


@cache
def data_block(posterior: str) -> dict[str, Any]:
    with zipfile.ZipFile(DATA / f"{data_name(posterior)}.json.zip") as archive:
        block: dict[str, Any] = json.loads(archive.read(archive.namelist()[0]))
    return block


@cache
def reference(posterior: str) -> dict[str, dict[str, float]]:
    summaries: dict[str, dict[str, dict[str, float]]] = json.loads(
        (DATA / "reference_summaries.json").read_text()
    )
    return summaries[posterior]


def target(posterior: str) -> Target:
    return TARGETS[posterior](data_block(posterior))
