"""Run the real daemon as a child process and wait on its JSON log events.

Shipped in the package (like structlog.testing) because both the tests and the
benchmarks drive the daemon this way: start it, wait for an event with a deadline,
signal it, read what it said.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Event = dict[str, Any]


class DaemonProcess:
    """`regime-trader ...` in a child process; its JSON log lines parsed as they come."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        full_env = {**os.environ, "REGIME_TRADER_LOG_FORMAT": "json", **(env or {})}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "service.cli", *args],
            cwd=cwd,
            env=full_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.events: list[Event] = []
        self.stderr: list[str] = []
        self._eof = False
        self._changed = threading.Condition()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._changed:
                self.events.append(_parse(line))
                self._changed.notify_all()
        with self._changed:
            self._eof = True
            self._changed.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)

    def wait_for(self, predicate: Callable[[Event], bool], timeout: float = 60.0) -> Event:
        """The first event matching `predicate`; fails at the deadline with what was seen."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                match = next((e for e in self.events if predicate(e)), None)
                if match is not None:
                    return match
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._eof:
                    raise AssertionError(self.report("no matching event"))
                self._changed.wait(min(remaining, 0.5))

    def named(self, event: str, **fields: Any) -> list[Event]:
        return [
            e
            for e in self.events
            if e.get("event") == event and all(e.get(k) == v for k, v in fields.items())
        ]

    def wait_exit(self, timeout: float = 120.0) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(self.report("did not exit")) from None

    def signal(self, signum: signal.Signals) -> None:
        self.proc.send_signal(signum)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def report(self, what: str) -> str:
        tail = "\n".join(json.dumps(e) for e in self.events[-15:])
        stderr = "".join(self.stderr[-30:])
        return f"{what}; exit={self.proc.poll()}\nlast events:\n{tail}\nstderr:\n{stderr}"


def _parse(line: str) -> Event:
    try:
        parsed = json.loads(line)
    except json.JSONDecodeError:
        return {"event": "(not json)", "line": line.rstrip("\n")}
    return parsed if isinstance(parsed, dict) else {"event": "(not an object)", "line": line}


# The small two-account configuration the tests, the chaos run and the benchmarks start
# the daemon with: a synthetic market, the simulated broker, the numpy reference.
TWO_ACCOUNT_INSTRUMENTS = """
[accounts.alpha]
symbols = ["SPY", "QQQ", "IWM"]

[accounts.beta]
symbols = ["AAPL", "MSFT", "BRK.B"]
"""


# These runs prove the daemon's mechanics (supervision, reload, crash safety); the model's
# quality is measured by the regime_model tests and benches. A shorter warm-up halves a
# fresh worker's first update; a warm one runs 5 + 20 iterations instead of 15 + 40, and
# without the level-shift move each is one density evaluation shorter (the move's own
# tests run it, device included). Their 4 x 20 draws are traded on within a Monte Carlo
# error of 0.1 rather than the daemon's 0.02, so that they trade as a daemon does.
LIGHT_EFFORT = ("warmup_cold = 100\nwarmup_warm = 5\ndraws = 20\nshift_moves = false\n"
                "mcse_max = 0.1\n")


def two_account_settings(
    *, clock: str = 'mode = "fast"', window: int = 128, level: str = "info", sections: str = "",
    effort: str = LIGHT_EFFORT,
) -> str:
    """service.toml for accounts alpha and beta; `sections` adds whole tables, `effort`
    lines to [model] (empty: the daemon's defaults)."""
    return f"""
instruments_file = "instruments.toml"

[[accounts]]
name = "alpha"

[[accounts]]
name = "beta"

[clock]
{clock}

[model]
window = {window}
chains = 4
backend = "numpy"
# These runs measure and prove the daemon's mechanics (supervision, reload, crash safety);
# the model's extra blocks for unconverged instruments only lengthen them.
extend_max = 0
{effort}
[logging]
level = "{level}"
format = "json"
{sections}"""


def write_config(folder: Path, settings: str, instruments: str = TWO_ACCOUNT_INSTRUMENTS) -> Path:
    """Write service.toml and instruments.toml into `folder`; returns service.toml."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "instruments.toml").write_text(instruments)
    path = folder / "service.toml"
    path.write_text(settings)
    return path
