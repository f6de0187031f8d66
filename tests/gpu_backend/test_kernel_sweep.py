"""`python -m gpu_backend.bench.kernels`: the threads-per-lane sweep writes what it measured."""

from __future__ import annotations

import json
from pathlib import Path

from wgpu_fixtures import fixture_gpu_device  # noqa: F401 - fixture

from gpu_backend.bench import kernels
from gpu_backend.wgpu_device import Device


def test_the_sweep_writes_one_row_per_setting(gpu_device: Device, tmp_path: Path) -> None:
    out = tmp_path / "kernels.json"
    argv = ["--out", str(out), "--lanes", "8", "--window", "12", "--steps", "2"]
    assert kernels.main([*argv, "--repeats", "1", "--updates", "0", "--threads", "0,4"]) == 0
    result = json.loads(out.read_text())
    assert [row["lane_threads"] for row in result["rows"]] == [0, 4]
    assert all(row["gradient_ms"] > 0 for row in result["rows"])
    assert result["shape"] == {"lanes": 8, "window": 12, "states": 2}
    assert result["command"].startswith("python -m gpu_backend.bench.kernels --out")
