"""Helpers of the endpoint's daemon tests: a free port, the daemon started with --http,
and GETs that return the status and the body whatever the status."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from service.bench.daemon_harness import DaemonProcess

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A port nothing listens on now (the daemon binds it a moment later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_daemon(*args: str) -> tuple[DaemonProcess, str]:
    """`regime-trader run ARGS --http 127.0.0.1:PORT`; returns it and its URL, once its
    `http.started` event says it serves."""
    daemon = DaemonProcess(["run", *args, "--http", f"127.0.0.1:{free_port()}"], cwd=ROOT)
    try:
        started = daemon.wait_for(lambda e: e.get("event") == "http.started", timeout=60)
    except AssertionError:
        daemon.stop()
        raise
    return daemon, str(started["url"])


def fetch(url: str) -> tuple[int, str, bytes]:
    """(status, content type, body) of a GET; a 4xx/5xx answer is returned, not raised."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read()


def fetch_json(url: str) -> tuple[int, Any]:
    status, _, body = fetch(url)
    return status, json.loads(body)


def poll_until(
    what: str, probe: Callable[[], Any], done: Callable[[Any], bool], timeout: float,
    daemon: DaemonProcess,
) -> Any:  # fmt: skip
    """Call `probe` until `done(result)`, for an HTTP state no log event announces; fails
    at the deadline with the last result and the daemon's recent events."""
    deadline = time.monotonic() + timeout
    while True:
        result = probe()
        if done(result):
            return result
        if time.monotonic() > deadline or daemon.proc.poll() is not None:
            raise AssertionError(daemon.report(f"{what}: last {result!r}"))
        time.sleep(0.1)  # the poll's period, not a wait for something to happen
