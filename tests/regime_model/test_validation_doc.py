"""docs/validation.md is the rendering of docs/validation.json. (That a re-run with the
JSON's seed gives its figures: test_validation_power.py, through the command; the numpy
path's bits are the same on every x86-64 host: test_golden_digest.py.)"""

from __future__ import annotations

import json
from pathlib import Path

from service.bench.validate_doc import render

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _report() -> dict:  # type: ignore[type-arg]
    report: dict = json.loads((DOCS / "validation.json").read_text())  # type: ignore[type-arg]
    return report


def test_the_document_is_the_reports_rendering() -> None:
    assert (DOCS / "validation.md").read_text() == render(_report())
