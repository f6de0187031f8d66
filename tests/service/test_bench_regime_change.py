"""`bench regime-change`: the worker's warm estimates bar by bar beside cold references,
in the JSON the issue names. (The figures themselves: docs/benchmarks.md.)"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from service.bench import regime_change
from service.cli import main


def test_a_synthetic_series_switches_where_it_says(tmp_path: Path) -> None:
    switches = regime_change.synthetic_csv(tmp_path / "s.csv", seed=3, bars=400)
    lines = (tmp_path / "s.csv").read_text().splitlines()
    assert lines[0] == "Date,Close" and len(lines) == 402
    assert switches and all("2010-03-01" <= s <= "2011-02-08" for s in switches)


def test_each_bar_of_the_range_has_a_warm_estimate_and_a_reference(tmp_path: Path) -> None:
    """A small reference (2 chains x 40 draws) and window (64) so that the test runs in
    seconds; the command line insists on >= 8 chains x 4,000."""
    regime_change.synthetic_csv(tmp_path / "s.csv", seed=3, bars=300)
    series = regime_change.Series(tmp_path / "s.csv", "CLOSE", date(2010, 10, 1),
                                  date(2010, 10, 3), window=64, extend_max=0)  # fmt: skip
    out = regime_change.measure(series, 7, 1, regime_change.Reference(2, 40, 40))
    assert out["daemon_spec"]["extend_max"] == 0
    assert [b["time"] for b in out["bars"]] == ["2010-10-01", "2010-10-02", "2010-10-03"]
    for row in out["bars"]:
        assert set(row) >= {"time", "warm", "reference", "converged"}
        assert 0.0 <= row["warm"] <= 1.0 and 0.0 <= row["reference"] <= 1.0
    errors = sorted(abs(b["warm"] - b["reference"]) for b in out["bars"])
    assert out["abs_error"]["max"] == pytest.approx(errors[-1], abs=1e-4)
    assert out["abs_error"]["median"] == pytest.approx(errors[1], abs=1e-4)
    assert 0.0 <= out["unconverged_fraction"] <= 1.0


def test_the_command_refuses_a_short_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["bench", "regime-change", "--csv", str(tmp_path / "x.csv"), "--from", "2008-08-01",
            "--to", "2008-10-31", "--reference-draws", "1000"]  # fmt: skip
    assert main(argv) == 2
    assert ">= 8 chains and >= 4000 draws" in capsys.readouterr().err
    argv = ["bench", "regime-change", "--write-synthetic", str(tmp_path / "s.csv"), "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["switches"]


def test_a_second_run_reuses_the_references_and_changes_only_the_warm_path(
    tmp_path: Path,
) -> None:
    """References do not depend on the warm updates: a sampler change is measured against
    the first run's references (the same numbers, reused), with its own warm estimates."""
    first, second = _measured_twice(tmp_path, 2, overrides=(("chains", "6"),))
    assert second["references_reused"] == 2 and first["references_reused"] == 0
    assert [b["reference"] for b in second["bars"]] == [b["reference"] for b in first["bars"]]
    assert second["daemon_spec"]["chains"] == 6 and first["daemon_spec"]["chains"] == 4
    with pytest.raises(ValueError, match=r"other settings \(seed"):
        regime_change.known_references(tmp_path / "first.json", _series(tmp_path, 2), 8, REF)


def test_references_of_runs_over_adjacent_ranges_are_reused_over_their_union(
    tmp_path: Path,
) -> None:
    """Long references take hours at the issue's size: they are made one date range per
    run and joined (`--references A.json --references B.json`)."""
    regime_change.synthetic_csv(tmp_path / "s.csv", seed=3, bars=300)
    whole = regime_change.Series(tmp_path / "s.csv", "Close", date(2010, 10, 1),
                                 date(2010, 10, 4), window=64, extend_max=0)  # fmt: skip
    ref = regime_change.Reference(2, 40, 40)
    parts = []
    for name, start, end in (("a", 1, 2), ("b", 3, 4)):
        part = whole._replace(start=date(2010, 10, start), end=date(2010, 10, end))
        parts.append(regime_change.measure(part, 7, 1, ref))
        (tmp_path / f"{name}.json").write_text(json.dumps(parts[-1]))
    known = regime_change.merged_references([tmp_path / "a.json", tmp_path / "b.json"],
                                            whole, 7, ref)  # fmt: skip
    joined = regime_change.measure(whole, 7, 1, ref, known)
    assert joined["references_reused"] == 4
    assert [b["reference"] for b in joined["bars"]] == [
        b["reference"] for part in parts for b in part["bars"]]
    assert [b["time"] for b in joined["bars"]] == [f"2010-10-0{d}" for d in (1, 2, 3, 4)]


def test_a_model_override_must_name_a_field_and_fit_its_type(tmp_path: Path) -> None:
    series = regime_change.Series(tmp_path / "s.csv", "Close", date(2010, 10, 1),
                                  date(2010, 10, 2), overrides=(("chain", "8"),))  # fmt: skip
    with pytest.raises(ValueError, match=r"not a ModelSpec field; one of .*'chains'"):
        regime_change.warm_spec(series)
    with pytest.raises(ValueError, match="steps_max=six: steps_max takes int values"):
        regime_change.warm_spec(series._replace(overrides=(("steps_max", "six"),)))
    spec = regime_change.warm_spec(series._replace(overrides=(("steps_max", "9"),)))
    assert spec.steps_max == 9 and spec.window == 256
    for text, value in (("true", True), ("False", False)):
        overrides = (("shift_moves", text),)
        assert regime_change.warm_spec(series._replace(overrides=overrides)).shift_moves is value
    with pytest.raises(ValueError, match="shift_moves=no: shift_moves takes bool values"):
        regime_change.warm_spec(series._replace(overrides=(("shift_moves", "no"),)))


def test_between_bars_the_warm_path_reweighs_the_sample_of_the_bar_before(
    tmp_path: Path,
) -> None:
    """`--between-bars`: each bar's estimate is the sample of the window before reweighed
    to this one (the worker's [model] sample_between_bars): other numbers than the
    sampler's at the bar, estimating the same posterior, against the same references."""
    at_bar, reweighed = _measured_twice(tmp_path, 6, between_bars=True)
    assert reweighed["daemon_spec"]["between_bars"] and not at_bar["daemon_spec"]["between_bars"]
    pairs = [(a["warm"], b["warm"]) for a, b in zip(at_bar["bars"], reweighed["bars"],
                                                     strict=True)]  # fmt: skip
    assert any(a != b for a, b in pairs)
    assert all(abs(a - b) <= 0.15 for a, b in pairs), pairs
    assert at_bar["sampled_at_bar_fraction"] == 1.0
    assert reweighed["sampled_at_bar_fraction"] == sum(b["at_bar"] for b in reweighed["bars"]) / 6
    assert reweighed["sampled_at_bar_fraction"] < 1.0


REF = regime_change.Reference(2, 40, 40)  # small, so that a test runs in seconds


def _series(tmp_path: Path, days: int) -> regime_change.Series:
    """October 1 to `days` of a synthetic series (written once), window 64, no run-on."""
    if not (tmp_path / "s.csv").exists():
        regime_change.synthetic_csv(tmp_path / "s.csv", seed=3, bars=300)
    return regime_change.Series(tmp_path / "s.csv", "Close", date(2010, 10, 1),
                                date(2010, 10, days), window=64, extend_max=0)  # fmt: skip


def _measured_twice(
    tmp_path: Path, days: int, **change: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A run, then a run with `change` to its Series reusing the first's references."""
    series = _series(tmp_path, days)
    first = regime_change.measure(series, 7, 1, REF)
    (tmp_path / "first.json").write_text(json.dumps(first))
    changed = series._replace(**change)
    known = regime_change.known_references(tmp_path / "first.json", changed, 7, REF)
    return first, regime_change.measure(changed, 7, 1, REF, known)
