"""One meaning for the output flags of every command: `--json` is a flag that prints one
JSON document on stdout and nothing else there (logs go to stderr), `--out PATH` writes
the document to a file; a progress line only when stderr is a terminal."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from service import cli
from service.bench import supervision
from service.commands.output import progress_at_tty


def _parsers(parser: argparse.ArgumentParser, name: str) -> Iterator[tuple[str, Any]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub, child in action.choices.items():
                yield from _parsers(child, f"{name} {sub}")


def test_json_is_a_flag_everywhere_and_out_takes_a_path() -> None:
    seen, wrong = [], []
    for name, parser in _parsers(cli._parser(), "regime-trader"):
        options = {o: a for a in parser._actions for o in a.option_strings}
        if "--json" in options:
            seen.append(name)
            if options["--json"].nargs != 0:
                wrong.append(f"{name}: --json takes a value; write files with --out PATH")
        if "--out" in options and options["--out"].nargs == 0:
            wrong.append(f"{name}: --out is a flag; it takes PATH")
    assert not wrong, "\n".join(wrong)
    expected = {"bench", "bench model", "bench supervision", "bench reload", "bench stages",
                "bench round", "bench kernels", "bench validate", "bench regime-change",
                "bench digest", "prove chaos", "prove soak", "verify-gpu", "fit", "replay",
                "show-config", "status"}  # fmt: skip
    assert {n.removeprefix("regime-trader ") for n in seen} >= expected


FIGURES = {"kill_to_first_update_s": {"p50": 1.5}, "idle_cpu_percent": 0.2}


@pytest.fixture
def measured(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`bench supervision` without the daemon: figures, and a log event on the way."""

    def measure() -> dict[str, Any]:
        structlog.get_logger("test").warning("test.measuring", what="supervision")
        return FIGURES

    monkeypatch.setattr(supervision, "measure", measure)
    yield
    structlog.reset_defaults()  # the commands configured logging: leave the default behind


def test_json_prints_one_document_and_the_logs_go_to_stderr(
    measured: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "figures" / "supervision.json"
    assert cli.main(["bench", "supervision", "--json", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    [line] = captured.out.splitlines()
    assert json.loads(line)["supervision"] == FIGURES
    assert json.loads(out.read_text()) == json.loads(line)
    assert "test.measuring" in captured.err


def test_without_json_stdout_is_for_a_person(
    measured: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["bench", "supervision"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "supervision.kill_to_first_update_s.p50: 1.5" in lines
    assert "supervision.idle_cpu_percent: 0.2" in lines


def test_progress_is_drawn_at_a_terminal_and_quiet_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert progress_at_tty("fit") is None
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as terminal:
        monkeypatch.setattr(sys, "stderr", terminal)
        update = progress_at_tty("fit")
        assert update is not None
        update(2, 2)
    drawn = os.read(leader, 1024).decode()
    os.close(leader)
    assert drawn.startswith("\rfit: 2/2 (100 %")
