"""Shared test harness: run the real daemon as a process and wait on its log events."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from service.bench.daemon_harness import (
    TWO_ACCOUNT_INSTRUMENTS,
    DaemonProcess,
    Event,
    two_account_settings,
    write_config,
)

__all__ = ["DaemonProcess", "Event"]

FAST_SETTINGS = two_account_settings(sections="\n[supervision]\nbackoff_initial_s = 0.05\n")
FAST_INSTRUMENTS = TWO_ACCOUNT_INSTRUMENTS


@pytest.fixture(autouse=True)
def _logging_left_as_found() -> Iterator[None]:
    """A test that configures logging in this process (a command run through cli.main)
    must not leave its stream, which pytest closes, and its context to the next test."""
    before = structlog.get_config()
    yield
    structlog.configure(**before)
    structlog.contextvars.clear_contextvars()


@pytest.fixture
def fast_config(tmp_path: Path) -> Path:
    """A two-account configuration with a fast clock and a small window."""
    return write_config(tmp_path / "config", FAST_SETTINGS)


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
