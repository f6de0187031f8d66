"""What the supervisor says about a worker's exit: every code and signal gets a meaning."""

from __future__ import annotations

import signal

import pytest

from service.supervisor.exit_reason import exit_fields
from service.supervisor.output_relay import StderrTail


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (0, "clean stop"),
        (70, "gave up"),
        (75, "temporary refusal"),
        (78, "bad configuration"),
        (1, "uncaught exception"),
        (255, "exit code 255"),
        (-signal.SIGKILL, "killed by SIGKILL"),
        (-signal.SIGSEGV, "killed by SIGSEGV"),
    ],
)
def test_every_exit_has_a_reason(code: int, words: str) -> None:
    fields = exit_fields(code, ["last words"])
    assert words in fields["reason"] and fields["stderr_tail"] == ["last words"]
    key = "signal" if code < 0 else "exit_code"
    assert key in fields


def test_an_unknown_signal_number_is_still_named() -> None:
    assert "signal 250" in exit_fields(-250, [])["reason"]


def test_the_stderr_tail_keeps_only_the_last_lines_each_cut_short() -> None:
    tail = StderrTail(lines=3, width=10)
    for n in range(10):
        tail.add(f"line {n} " + "x" * 50)
    kept = tail.lines()
    assert len(kept) == 3 and kept[0].startswith("line 7") and all(len(s) <= 10 for s in kept)
    tail.clear()
    assert tail.lines() == []
