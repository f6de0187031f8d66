"""Shared test harness: run the real daemon as a process and wait on its log events."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from service.daemon_harness import DaemonProcess, Event

__all__ = ["DaemonProcess", "Event"]

FAST_SETTINGS = """
instruments_file = "instruments.toml"

[[accounts]]
name = "alpha"

[[accounts]]
name = "beta"

[clock]
mode = "fast"

[model]
window = 128
chains = 4
backend = "numpy"

[logging]
format = "json"

[supervision]
backoff_initial_s = 0.05
"""

FAST_INSTRUMENTS = """
[accounts.alpha]
symbols = ["SPY", "QQQ", "IWM"]

[accounts.beta]
symbols = ["AAPL", "MSFT", "BRK.B"]
"""


@pytest.fixture
def fast_config(tmp_path: Path) -> Path:
    """A two-account configuration with a fast clock and a small window."""
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "instruments.toml").write_text(FAST_INSTRUMENTS)
    path = folder / "service.toml"
    path.write_text(FAST_SETTINGS)
    return path


@pytest.fixture
def run_daemon(tmp_path: Path) -> Iterator[Callable[..., DaemonProcess]]:
    started: list[DaemonProcess] = []

    def start(*args: str, env: dict[str, str] | None = None) -> DaemonProcess:
        daemon = DaemonProcess(list(args), cwd=Path(__file__).resolve().parent.parent, env=env)
        started.append(daemon)
        return daemon

    yield start
    for daemon in started:
        daemon.stop()


@pytest.fixture
def alpaca_server() -> Iterator[Any]:
    """A local Alpaca-compatible server on 127.0.0.1 (tests/alpaca_server), stopped after."""
    from alpaca_server import AlpacaServer  # noqa: PLC0415 - only the tests that use it

    server = AlpacaServer().start()
    yield server
    server.stop()
