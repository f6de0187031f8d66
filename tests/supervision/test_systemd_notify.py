"""The daemon speaks sd_notify to a real datagram socket, as under systemd."""

from __future__ import annotations

import signal
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import DaemonProcess


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    yield sock, path
    sock.close()


def receive_until(sock: socket.socket, wanted: str, timeout: float = 60.0) -> list[str]:
    """Datagrams, in order, up to and including the first that contains `wanted`."""
    deadline, seen = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            seen.append(sock.recv(4096).decode())
        except TimeoutError:
            break
        if wanted in seen[-1]:
            return seen
    raise AssertionError(f"no {wanted!r} within {timeout}s; got {seen}")


def test_ready_status_watchdog_and_stopping_reach_systemd(
    run_daemon: Callable[..., DaemonProcess],
    fast_config: Path,
    tmp_path: Path,
    notify_socket: tuple[socket.socket, str],
) -> None:
    sock, path = notify_socket
    env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000"}
    daemon = run_daemon(
        "run", "--config", str(fast_config), "--state-dir", str(tmp_path / "s"), env=env
    )
    before_ready = receive_until(sock, "READY=1")
    assert any(m.startswith("STATUS=") for m in before_ready + receive_until(sock, "STATUS="))
    watchdogs = [
        m
        for m in receive_until(sock, "WATCHDOG=1") + receive_until(sock, "WATCHDOG=1")
        if m == "WATCHDOG=1"
    ]
    assert len(watchdogs) >= 2
    daemon.signal(signal.SIGTERM)
    assert "STOPPING=1" in receive_until(sock, "STOPPING=1")[-1]
    assert daemon.wait_exit() == 0


def test_workers_do_not_inherit_the_notify_socket(
    run_daemon: Callable[..., DaemonProcess],
    fast_config: Path,
    tmp_path: Path,
    notify_socket: tuple[socket.socket, str],
) -> None:
    """Only the main process may notify (NotifyAccess=main): every datagram comes from
    the supervisor's pid."""
    sock, path = notify_socket
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    daemon = run_daemon(
        "run",
        "--config",
        str(fast_config),
        "--state-dir",
        str(tmp_path / "s"),
        "--stop-after",
        "2",
        env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000"},
    )
    senders = set()
    deadline = time.monotonic() + 60
    while daemon.proc.poll() is None and time.monotonic() < deadline:
        sock.settimeout(0.5)
        try:
            _, ancillary, _, _ = sock.recvmsg(4096, socket.CMSG_SPACE(12))
        except TimeoutError:
            continue
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                senders.add(int.from_bytes(data[:4], "little"))
    assert daemon.wait_exit() == 0
    assert senders == {daemon.proc.pid}
