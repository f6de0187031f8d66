"""`regime-trader fit` on a CSV: parameters in input units and a filtered path per bar."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from service.cli import main
from service.progress import show_progress
from tests.regime_model.regime_data import two_regime_returns

SP500 = Path(__file__).resolve().parents[1] / "data" / "sp500.csv"


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


def test_fit_takes_a_window_by_date_a_column_in_any_case_and_writes_both_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Yahoo's header (Close), --from/--to inclusive, smoothed beside filtered in the JSON
    and in --csv-out, and no progress line when stderr is not a terminal."""
    bars = tmp_path / "bars.csv"
    bars.write_text(SP500.read_text())
    out = tmp_path / "paths.csv"
    argv = ["fit", "--csv", str(bars), "--column", "Close", "--from", "2008-08-01",
            "--to", "2008-10-31", "--draws", "60", "--warmup", "100", "--json",
            "--csv-out", str(out)]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert captured.err == ""
    times = [row["time"] for row in report["smoothed"]]
    # 65 closes from 2008-08-01 to 2008-10-31: 64 returns, the first ending 2008-08-04.
    assert (len(times), times[0], times[-1]) == (64, "2008-08-04", "2008-10-31")
    assert [row["time"] for row in report["filtered"]] == times
    for row in report["smoothed"]:
        assert abs(sum(row["probs"]) - 1.0) < 1e-9
    # At the last bar the smoothed probability is the filtered one (no later data).
    assert report["smoothed"][-1]["probs"] == report["filtered"][-1]["probs"]
    lines = out.read_text().splitlines()
    assert lines[0] == "time,filtered_1,filtered_2,smoothed_1,smoothed_2"
    assert len(lines) == 65 and lines[-1].startswith("2008-10-31,")


def test_fit_refuses_a_window_without_dates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bars.csv").write_text("bar,close\n1,1.0\n2,1.1\n")
    assert main(["fit", "--csv", str(tmp_path / "bars.csv"), "--from", "2008-01-01"]) == 65
    assert "--from/--to need dates in the first column, found '1'" in capsys.readouterr().err


def test_progress_redraws_one_line_and_ends_it() -> None:
    out = io.StringIO()
    update = show_progress("fit", out)
    update(1, 4)
    update(4, 4)
    text = out.getvalue()
    assert text.startswith("\rfit: 1/4 (25 %") and text.endswith("\n")
    assert "\rfit: 4/4 (100 %" in text
