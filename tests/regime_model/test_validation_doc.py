"""docs/validation.md is the rendering of docs/validation.json, and a re-run of the suite
with the JSON's seed gives the JSON's figures (here the checks that run in seconds; the
numpy path's bits are the same on every x86-64 host: test_golden_digest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from service.bench import validate
from service.bench.validate_doc import render

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _report() -> dict:  # type: ignore[type-arg]
    report: dict = json.loads((DOCS / "validation.json").read_text())  # type: ignore[type-arg]
    return report


def test_the_document_is_the_reports_rendering() -> None:
    assert (DOCS / "validation.md").read_text() == render(_report())


def test_a_rerun_with_the_same_seed_gives_the_same_figures() -> None:
    report = _report()
    assert report["numpy"] == np.__version__  # the pinned numpy: bits are per version
    recorded = {c["name"]: c for c in report["checks"]}
    for check in validate.run_suite(report["size"], report["seed"], ("gradient", "worker_path")):
        assert check["figures"] == recorded[check["name"]]["figures"], check["name"]
        assert check["passed"] == recorded[check["name"]]["passed"]
