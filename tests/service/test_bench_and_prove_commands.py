"""`regime-trader bench` measures and `regime-trader prove` proves: the command line's
shape, plain `bench` as `bench model` (scripts use it), and the proofs' exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from service import cli
from service.bench import chaos, soak


@pytest.mark.parametrize(
    ("argv", "handler", "fields"),
    [
        (["bench"], "model_handler", {"shape": "small", "trajectory": "jitter"}),
        (["bench", "--shape", "trial"], "model_handler", {"shape": "trial"}),
        (["bench", "model", "--trajectory", "chees"], "model_handler", {"trajectory": "chees"}),
        (["bench", "ops", "out"], "ops_handler", {"dir": Path("out")}),
        (["bench", "kernels", "--out", "k.json", "--threads", "0,64"], "kernels_handler",
         {"out": Path("k.json"), "threads": "0,64", "lanes": 1072}),
        (["bench", "supervision", "--out", "s.json"], "daemon_handler",
         {"what": "supervision", "out": Path("s.json"), "json": False}),
        (["bench", "reload"], "daemon_handler", {"what": "reload"}),
        (["prove", "chaos", "--kills", "26", "--seed", "7"], "chaos_handler",
         {"kills": 26, "seed": 7, "effort": "default"}),
        (["prove", "chaos", "--kills", "10", "--seed", "3", "--effort", "light"],
         "chaos_handler", {"kills": 10, "seed": 3, "effort": "light"}),
        (["prove", "soak", "--minutes", "62", "--sample-s", "5"], "soak_handler",
         {"minutes": 62.0, "sample_s": 5.0}),
    ],
)
def test_each_command_line_reaches_its_handler(
    argv: list[str], handler: str, fields: dict[str, Any]
) -> None:
    args = cli._parser().parse_args(argv)
    assert args.handler.__name__ == handler
    assert {key: getattr(args, key) for key in fields} == fields


@pytest.mark.parametrize("argv", [["bench", "--chaos", "3"], ["bench", "--soak", "1"],
                                  ["prove", "chaos"], ["prove", "soak"]])
def test_the_old_flags_are_gone_and_a_proof_needs_its_size(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli._parser().parse_args(argv)
    assert exit_.value.code == 2


@pytest.mark.parametrize(("equivalent", "code"), [(True, 0), (False, 1)])
def test_prove_chaos_exits_1_when_the_end_states_differ(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    equivalent: bool, code: int,
) -> None:
    monkeypatch.setattr(chaos, "run_chaos", lambda kills, seed, settings: {
        "equivalent": equivalent, "kills": kills, "seed": seed})
    out = tmp_path / "chaos.json"
    argv = ["prove", "chaos", "--kills", "4", "--seed", "9", "--json", "--out", str(out)]
    assert cli.main(argv) == code
    assert json.loads(out.read_text()) == json.loads(capsys.readouterr().out)
    assert json.loads(out.read_text())["seed"] == 9


def test_prove_soak_passes_minutes_sampling_and_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[float, Path, float]] = []

    def run_soak(minutes: float, out: Path, sample_s: float) -> dict[str, Any]:
        calls.append((minutes, out, sample_s))
        return {}

    monkeypatch.setattr(soak, "run_soak", run_soak)
    out = tmp_path / "soak.json"
    argv = ["prove", "soak", "--minutes", "2", "--sample-s", "3", "--json", "--out", str(out)]
    assert cli.main(argv) == 0
    assert calls == [(2.0, out, 3.0)]
    assert json.loads(capsys.readouterr().out) == {}
