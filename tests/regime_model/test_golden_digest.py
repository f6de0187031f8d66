"""The numpy path gives the same bits on every x86-64 host with the same numpy: a fixed
update and a fixed fit against the digests recorded on two CPUs (tests/data). Until
2026-12-01 a batched matmul (BLAS, whose kernel and summation order follow the CPU) made
an Intel Xeon's bits differ from an AMD EPYC's; docs/validation-history.md."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from service.bench.digest import digests

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden_digests.json"


def test_the_fixed_update_and_fit_give_the_recorded_bits() -> None:
    golden = json.loads(GOLDEN.read_text())
    assert np.__version__ in golden, (
        f"no golden digest for numpy {np.__version__} (pyproject pins the version): run "
        "`regime-trader bench digest` on two x86-64 hosts, check they agree, record it"
    )
    got = digests()
    assert (got["update"], got["fit"]) == (golden[np.__version__]["update"],
                                           golden[np.__version__]["fit"])  # fmt: skip
