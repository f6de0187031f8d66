"""The posteriordb cases copied into tests/data/posteriordb (see its README for attribution),
read as `bench validate` reads them."""

from __future__ import annotations

from service.bench.validate_data import data_block, reference, target

__all__ = ["data_block", "reference", "target"]
