"""`regime-trader fit` on a CSV: parameters in input units and a filtered path per bar."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from service.cli import main
from tests.regime_model.regime_data import two_regime_returns


def write_prices(path: Path, returns: np.ndarray) -> None:
    prices = 100.0 * np.exp(np.concatenate([[0.0], np.cumsum(returns)]))
    rows = "".join(f"2026-01-{i:04d},{p:.8f}\n" for i, p in enumerate(prices))
    path.write_text("date,close\n" + rows)


def test_fit_reports_ordered_vols_in_input_units_and_one_row_per_return(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    returns, _ = two_regime_returns(1, 300, seed=4, vols=(0.01, 0.03), switch=0.01)
    write_prices(tmp_path / "bars.csv", returns[0])
    argv = ["fit", "--csv", str(tmp_path / "bars.csv"), "--draws", "60", "--warmup", "150"]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    params = report["parameters"]
    assert set(params) >= {"mu[1]", "sigma[1]", "sigma[2]", "P[1,1]", "P[2,1]"}
    assert 0.005 < params["sigma[1]"]["mean"] < params["sigma[2]"]["mean"] < 0.06
    assert len(report["filtered"]) == 300
    assert abs(sum(report["filtered"][-1]["probs"]) - 1.0) < 1e-9
    assert report["diagnostics"]["divergences"] == 0


def test_fit_names_a_missing_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bars.csv").write_text("date,price\n2026-01-01,1.0\n")
    assert main(["fit", "--csv", str(tmp_path / "bars.csv")]) == 65
    assert "no column 'close'" in capsys.readouterr().err
