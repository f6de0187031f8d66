"""`regime-trader bench round`: a short real run of the daemon gives figures of the right
shape whose numbers agree with each other; the reduction classifies rounds as it says.

No timing is asserted: only what holds however slow the machine is (a round lasts at least
its slowest account's model stage; no update starts before its bar's release; counts add
up)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from service import cli
from service.bench import round as round_bench
from service.bench.round_figures import RoundRun, figures, rounds
from service.config_loader import load_config

REQUIRED = {"round_ms", "stages_ms", "submissions_per_update", "upload_bytes_per_update",
            "backend", "adapter", "machine"}
STAGES = {"fetch", "model", "strategy", "checkpoint", "orders"}
ROUNDING_MS = 0.01  # wall times are logged to the microsecond


def _ordered(stats: dict[str, float] | None) -> bool:
    return stats is None or stats["p50"] <= stats["p99"] <= stats.get("max", stats["p99"])


def test_a_short_real_run_gives_consistent_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "round.json"
    argv = ["bench", "round", "--accounts", "2", "--instruments", "5", "--chains", "2",
            "--window", "32", "--bars", "3", "--backend", "numpy", "--pace-s", "2",
            "--lead-s", "6", "--at-bar", "--json", "--out", str(out)]  # the sampler's parts
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert len(printed) == 1  # one JSON object, nothing else on stdout
    result = json.loads(printed[0])
    assert result == json.loads(out.read_text())
    assert set(result) >= REQUIRED
    assert set(result["round_ms"]["cold"]) == {"p50", "p99", "max"}
    assert set(result["stages_ms"]) == STAGES
    assert all(set(s) == {"p50", "p99"} and _ordered(s) for s in result["stages_ms"].values())
    assert all(_ordered(result["round_ms"][k]) for k in ("cold", "warm", "warm_overlapped"))
    # The model stage's parts: each is inside the stage in every update, so in the median
    parts = result["model_parts_ms"]
    assert "summary" in parts and "sampling" in parts
    model_p50 = result["stages_ms"]["model"]["p50"]
    assert all(p["p50"] <= model_p50 + ROUNDING_MS for p in parts.values())
    _check_counts(result)
    _check_rounds(result)


def _check_counts(result: dict[str, Any]) -> None:
    assert result["updates"] == 2 * 3  # --stop-after 3 in each of the 2 accounts
    assert result["instruments_per_account"] == {"min": 2, "max": 3}
    kinds = result["rounds"]  # how many of each depends on the machine's speed; the sum not
    assert kinds["cold"] == 1
    assert sum(kinds.values()) == result["round_list"][-1]["bar"] + 1
    assert sum(r["kind"] == "incomplete" for r in result["round_list"]) == kinds["incomplete"]
    assert (result["backend"], result["adapter"]) == ("numpy", "cpu")
    assert result["submissions_per_update"] == result["upload_bytes_per_update"] == 0
    assert result["machine"]["gpu"] is None and result["machine"]["cpus"] >= 1
    # What the daemon tree cost the host: real CPU time, and a worker's resident set
    # (a Python process with numpy loaded is tens of MB at least)
    host = result["host"]
    assert host["cpu_s"] > 0
    assert abs(host["cpu_s_per_account_update"] - host["cpu_s"] / result["updates"]) < 0.01
    assert 20 < host["peak_rss_mb"] < 4096


def _check_rounds(result: dict[str, Any]) -> None:
    listed = result["round_list"]
    assert listed[0]["kind"] == "cold" and listed[0]["bar"] == 0
    assert result["round_ms"]["cold"]["max"] == listed[0]["ms"]
    assert result["round_ms"]["cold"]["max"] >= result["cold_stages_ms"]["model"]["max"]
    for r in listed:
        assert r["wake_ms"] >= -ROUNDING_MS  # no account starts before the release
        assert r["ms"] is None if r["kind"] == "incomplete" else (
            r["ms"] >= r["model_ms_max"] - ROUNDING_MS)  # a round outlasts its model stages


def test_the_shape_is_checked_before_anything_starts(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "round", "--accounts", "3", "--instruments", "2", "--bars", "1",
            "--chains", "65", "--extension-chains", "8", "--between-bars-margin", "1.5"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "--instruments 2 must be at least --accounts" in err
    assert "--bars 1 must be at least 2" in err
    assert "--chains 65 must be 2..64" in err
    assert "--extension-chains 8 must be --chains..256" in err
    assert "--between-bars-margin 1.5 must be in (0, 1]" in err


@pytest.mark.parametrize(("count", "accounts"), [(268, 5), (6, 2), (7, 3), (3, 3)])
def test_instruments_are_shared_out_evenly(count: int, accounts: int) -> None:
    runs = round_bench.share_out(round_bench.symbols(count), accounts)
    sizes = [len(r) for r in runs]
    assert len(runs) == accounts and max(sizes) - min(sizes) <= 1
    assert [s for r in runs for s in r] == round_bench.symbols(count)


@pytest.mark.parametrize(("shift_moves", "shared", "wide", "between", "margin"),
                         [(True, False, 32, "auto", 1.0), (False, True, 64, True, 0.6),
                          (True, False, 32, False, 1.0)])  # fmt: skip
def test_the_settings_it_runs_are_valid_and_carry_the_shape(
    tmp_path: Path, shift_moves: bool, shared: bool, wide: int, between: bool | str,
    margin: float,
) -> None:
    """--shift-moves off measures the daemon without the level-shift move; --shared-device
    with one device process for every account; --extension-chains with wider run-on blocks;
    --between-bars with each update's sampler after its commit, --at-bar without it, and
    "auto", an earlier default, still accepted; --between-bars-margin with that sampler
    run on to a share of the gate."""
    shape = round_bench.RoundShape(accounts=2, instruments=3, chains=6, shift_moves=shift_moves,
                                   shared_device=shared, extension_chains=wide,
                                   between_bars=between, between_bars_margin=margin)  # fmt: skip
    (tmp_path / "instruments.toml").write_text(round_bench.instruments_text(shape))
    (tmp_path / "config.toml").write_text(round_bench.settings_text(shape))
    model = load_config(tmp_path / "config.toml").settings.model
    assert (model.chains, model.shift_moves, model.shared_device, model.extension_chains,
            model.sample_between_bars, model.between_bars_margin) == (
                6, shift_moves, shared, wide, between, margin)


# -- the reduction, on events written out by hand ------------------------------------------

ANCHOR = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
FIRST_BAR = datetime(2026, 1, 5, 19, 47, tzinfo=UTC)


def _update(account: str, seq: int, bar: int, start: float, commit: float, end: float,
            model_ms: float) -> dict[str, Any]:
    """An update.completed at bar `bar`; times in seconds after the anchor."""
    at = ANCHOR.timestamp()
    return {"event": "update.completed", "account": account, "seq": seq,
            "bar_time": (FIRST_BAR + timedelta(minutes=bar)).isoformat(),
            "started_at": at + start, "committed_at": at + commit,
            "timestamp": (ANCHOR + timedelta(seconds=end)).isoformat(),
            "timings_ms": {"model": model_ms}}


def _run(events: list[dict[str, Any]]) -> RoundRun:
    return RoundRun(events, ["a", "b"], ANCHOR, 2.0, timedelta(minutes=1))


def test_rounds_are_timed_from_the_release_and_classified() -> None:
    events = [
        _update("a", 1, 0, 0.001, 1.0, 1.1, 900.0), _update("b", 1, 0, 0.002, 1.5, 1.6, 1400.0),
        _update("a", 2, 1, 2.0, 2.5, 2.6, 400.0), _update("b", 2, 1, 2.0, 2.25, 2.3, 200.0),
        _update("a", 3, 2, 4.5, 6.5, 6.6, 1900.0), _update("b", 3, 2, 4.0, 4.5, 4.6, 400.0),
        _update("a", 4, 3, 6.6, 7.0, 7.1, 300.0), _update("b", 4, 3, 6.0, 6.2, 6.3, 100.0),
        _update("a", 5, 5, 10.0, 10.5, 10.6, 400.0),  # b skipped bar 5: it ends at bar 4
    ]
    listed = rounds(_run(events))
    assert [(r["bar"], r["kind"], r["ms"]) for r in listed] == [
        (0, "cold", 1500.0), (1, "warm", 500.0), (2, "warm", 2500.0),
        (3, "overlapped", 1000.0),  # a was still busy with bar 2 when bar 3 was released
        (5, "incomplete", None),
    ]
    assert listed[2]["wake_ms"] == 0.0 and listed[2]["model_ms_max"] == 1900.0


def test_a_worker_ready_after_the_first_release_is_refused() -> None:
    ready = {"event": "worker.started", "account": "a", "timestamp": ANCHOR.isoformat()}
    late = {**ready, "account": "b", "timestamp": (ANCHOR + timedelta(seconds=3)).isoformat()}
    launched = ANCHOR.timestamp() - 5.0
    with pytest.raises(round_bench.RoundBenchError, match=r"no worker\.started from b"):
        round_bench._refuse_late_start(_run([ready]), launched, 5.0)
    with pytest.raises(round_bench.LateStartError, match=r"ready 8\.0 s after launch") as error:
        round_bench._refuse_late_start(_run([ready, late]), launched, 5.0)
    assert error.value.startup_s == pytest.approx(8.0)
    round_bench._refuse_late_start(_run([ready, {**late, "timestamp": ready["timestamp"]}]),
                                   launched, 5.0)  # both ready at the release: accepted


def test_a_run_that_samples_between_bars_reports_its_sampler_and_reweighing() -> None:
    """The model.sampled events give the sampler's own time and device work after the
    commit; update.completed's counts of reweighed instruments are counts, not ms."""
    events: list[dict[str, Any]] = []
    for account in ("a", "b"):
        for seq, bar in ((1, 0), (2, 1), (3, 2)):
            update = _update(account, seq, bar, 2.0 * bar, 2.0 * bar + 0.1, 2.0 * bar + 0.2, 30.0)
            update["model"] = {"reweighed": 2.0 if seq > 1 else 0.0,
                               "sampled_at_bar": 0.0 if seq > 1 else 2.0,
                               "min_share": 0.5 + 0.125 * seq if seq > 1 else float("nan"),
                               "reweigh": 25.0}  # fmt: skip
            update.update(device={"submissions": 1, "upload_bytes": 1000}, backend="wgpu",
                          adapter="a GPU")  # fmt: skip
            sampled = {"event": "model.sampled", "account": account, "seq": seq,
                       "duration_ms": 300.0 + seq, "device": {"submissions": 2,
                                                              "upload_bytes": 5000},
                       "at_risk": seq, "at_risk_margins": {"0.6": seq - 1, "0.3": 1}}  # fmt: skip
            events += [update, sampled]
    result = figures(_run(events))
    assert result["sampled_ms"] == {"p50": 302.5, "p99": 303.0}  # warm updates: seq 2, 3
    assert result["sampled_submissions_per_update"] == 2.0
    assert result["sampled_after_cold_ms"] == {"p50": 301.0, "max": 301.0}  # seq 1's alone
    assert result["at_risk"] == {"per_update": {"p50": 2.0, "max": 3.0}, "in_all": 12,
                                 "by_margin": {"0.6": 6, "0.3": 6}}  # fmt: skip
    assert result["reweighing"] == {"reweighed": {"p50": 2.0, "max": 2.0},
                                    "sampled_at_bar": {"p50": 0.0, "max": 0.0},
                                    "min_share": 0.75,
                                    "at_bar_why": {"no_draws": 0.0, "not_moved": 0.0,
                                                   "weights": 0.0, "gate": 0.0}}  # fmt: skip
    assert set(result["model_parts_ms"]) == {"reweigh"}
    for key, value in {"accounts": 2, "instruments": 4, "bars": 3, "host": {
            "cpu_s": 1.0, "cpu_s_per_account_update": 0.2, "peak_rss_mb": 100.0}}.items():
        result[key] = value
    (line,) = [x for x in round_bench.summary_lines(result) if x.startswith("between bars")]
    assert "p50 302.5" in line and "'gate': 0.0" in line and "at least 0.750" in line
    (line,) = [x for x in round_bench.summary_lines(result) if x.startswith("at risk")]
    assert "12 in all" in line and "'0.3': 6" in line and "max 301.0" in line


def test_the_daemons_default_samples_between_bars(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Neither --between-bars nor --at-bar: [model] sample_between_bars as the daemon's
    default, true: the warm updates reweigh, the sampler runs after each commit."""
    argv = ["bench", "round", "--accounts", "2", "--instruments", "4", "--chains", "2",
            "--window", "32", "--bars", "3", "--backend", "numpy", "--pace-s", "2",
            "--lead-s", "6", "--json"]  # fmt: skip
    assert cli.main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["between_bars"] is True
    reweighing = result["reweighing"]
    assert reweighing is not None and reweighing["reweighed"]["max"] >= 1
    assert result["sampled_ms"]["p50"] > 0
    assert "sampling" not in result["model_parts_ms"] or reweighing["sampled_at_bar"]["max"] > 0


def test_the_two_modes_are_one_choice(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["bench", "round", "--between-bars", "--at-bar"])
    assert exited.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
