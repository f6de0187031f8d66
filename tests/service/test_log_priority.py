"""journald priorities: under journald each stdout line is led by `<N>` for its level (the
supervisor's own lines and the workers' lines it relays); anywhere else, plain JSON lines.

"Under journald" is checked for real: stdout is a Unix stream socket (what journald hands
a service) and $JOURNAL_STREAM holds that socket's device and inode, as systemd sets it.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.log_priority import PRIORITIES, writes_to_journal
from service.supervisor.output_relay import write_line

ROOT = Path(__file__).resolve().parents[2]
EMIT_EVERY_LEVEL = """
import structlog
from service.logs import configure_logging
configure_logging("debug", "json")
log = structlog.get_logger("test")
log.debug("t.debug"); log.info("t.info"); log.warning("t.warning"); log.error("t.error")
log.critical("t.critical")
try:
    raise ValueError("boom")
except ValueError:
    log.exception("t.exception")
"""
EXPECTED = {"t.debug": 7, "t.info": 6, "t.warning": 4, "t.error": 3, "t.critical": 2,
            "t.exception": 3}  # fmt: skip


@pytest.fixture
def journal() -> Iterator[tuple[socket.socket, socket.socket, str]]:
    """A stream socket pair: the write end is the service's stdout, as under systemd."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    info = os.fstat(theirs.fileno())
    yield ours, theirs, f"{info.st_dev}:{info.st_ino}"
    ours.close()
    theirs.close()


def _run(args: list[str], stdout: int, env: dict[str, str]) -> subprocess.Popen[bytes]:
    clean = {k: v for k, v in os.environ.items() if k not in ("JOURNAL_STREAM", "NOTIFY_SOCKET")}
    return subprocess.Popen([sys.executable, *args], cwd=ROOT, stdout=stdout,
                            stderr=subprocess.PIPE, env={**clean, **env})  # fmt: skip


def _read_all(ours: socket.socket, proc: subprocess.Popen[bytes], timeout: float) -> list[str]:
    ours.settimeout(timeout)
    chunks = []
    while chunk := ours.recv(65536):
        chunks.append(chunk)
    _, stderr = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, stderr.decode()
    return b"".join(chunks).decode().splitlines()


def _split(line: str) -> tuple[int, dict[str, object]]:
    assert line.startswith("<") and line[2] == ">", line
    return int(line[1]), json.loads(line[3:])


def test_under_journald_every_line_is_led_by_its_level_priority(
    journal: tuple[socket.socket, socket.socket, str],
) -> None:
    ours, theirs, stream = journal
    proc = _run(["-c", EMIT_EVERY_LEVEL], theirs.fileno(), {"JOURNAL_STREAM": stream})
    theirs.close()
    lines = _read_all(ours, proc, 30)
    got = {event["event"]: priority for priority, event in map(_split, lines)}
    assert got == EXPECTED


@pytest.mark.parametrize("journal_stream", [None, "1:2", "garbage"])
def test_elsewhere_the_lines_are_plain_json(tmp_path: Path, journal_stream: str | None) -> None:
    """No $JOURNAL_STREAM (rc.d, a terminal, a pipe into jq), or one naming another stream
    (inherited from a desktop session or a unit's script): no prefix."""
    out = tmp_path / "out.jsonl"
    env = {} if journal_stream is None else {"JOURNAL_STREAM": journal_stream}
    with out.open("wb") as handle:
        proc = _run(["-c", EMIT_EVERY_LEVEL], handle.fileno(), env)
        assert proc.wait(30) == 0
    events = [json.loads(line) for line in out.read_text().splitlines()]
    assert [e["event"] for e in events] == list(EXPECTED)


def test_the_relay_gives_a_worker_line_the_priority_of_its_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "journal"
    lines = [json.dumps({"event": "x", "level": level}).encode() for level in PRIORITIES]
    lines += [b"Traceback (most recent call last):", b"<3> not ours", b"[1, 2]"]
    with out.open("wb") as handle:
        info = os.fstat(handle.fileno())
        monkeypatch.setenv("JOURNAL_STREAM", f"{info.st_dev}:{info.st_ino}")
        assert writes_to_journal(handle)
        for line in lines:
            write_line(line, handle)
    written = out.read_bytes().splitlines()
    assert written == [f"<{p}>".encode() + line for p, line in
                       zip([*PRIORITIES.values(), 6, 6, 6], lines, strict=True)]  # fmt: skip


def test_the_relay_passes_lines_through_when_stdout_is_not_the_journal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("JOURNAL_STREAM", "1:2")
    buffer = io.BytesIO()
    write_line(b'{"event": "x", "level": "error"}', buffer)
    assert buffer.getvalue() == b'{"event": "x", "level": "error"}\n'


def test_the_daemon_under_journald_prefixes_its_own_and_its_workers_lines(
    journal: tuple[socket.socket, socket.socket, str], fast_config: Path, tmp_path: Path
) -> None:
    """The real daemon, stdout on a stream socket named by $JOURNAL_STREAM. An unusable
    $NOTIFY_SOCKET makes the supervisor warn (sd_notify.unsupported), so a warning line is
    certain; the workers' lines come through the relay."""
    ours, theirs, stream = journal
    args = ["-m", "service.cli", "run", "--config", str(fast_config), "--state-dir",
            str(tmp_path / "state"), "--stop-after", "1"]  # fmt: skip
    env = {"JOURNAL_STREAM": stream, "NOTIFY_SOCKET": "tcp:nowhere",
           "REGIME_TRADER_LOG_FORMAT": "json"}  # fmt: skip
    proc = _run(args, theirs.fileno(), env)
    theirs.close()
    lines = [_split(line) for line in _read_all(ours, proc, 120)]
    assert all(p == PRIORITIES[str(e["level"])] for p, e in lines), lines
    by_event = {(e["event"], e.get("account")): p for p, e in lines}
    assert by_event[("sd_notify.unsupported", None)] == 4
    assert by_event[("update.completed", "alpha")] == 6  # a worker's line, relayed
    assert by_event[("service.stopped", None)] == 6
