"""The daemon speaks sd_notify to a real datagram socket, as under systemd.

A thread drains the socket as systemd would, so the tests wait on datagrams (events) with
a deadline instead of reading in bursts that let the socket's small queue fill up.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import DaemonProcess

from tests.supervision.full_socket import fill

DEADLINE_S = 60.0


class Listener:
    """A bound datagram socket read on its own thread; each datagram with its sender pid."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.received: list[tuple[int, str]] = []
        self._changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        with contextlib.suppress(OSError):  # closed at the end of the test
            while True:
                data, ancillary, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(12))
                with self._changed:
                    self.received.append((_sender(ancillary), data.decode()))
                    self._changed.notify_all()

    def wait_for(self, wanted: str, after: int = 0) -> int:
        """The index of the first datagram at or past `after` that contains `wanted`."""
        deadline = time.monotonic() + DEADLINE_S
        with self._changed:
            while True:
                found = next((i for i, (_, m) in enumerate(self.received)
                              if i >= after and wanted in m), None)
                if found is not None:
                    return found
                remaining = deadline - time.monotonic()
                assert remaining > 0, f"no {wanted!r} within {DEADLINE_S}s: {self.received}"
                self._changed.wait(remaining)

    def mark(self) -> str:
        """Send a datagram of our own; once it is read, everything sent before it was."""
        text = f"TEST-MARK-{time.monotonic_ns()}"
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sender:
            sender.sendto(text.encode(), self.path)
        return text

    def messages(self) -> list[str]:
        with self._changed:
            return [m for _, m in self.received]

    def senders(self) -> set[int]:
        with self._changed:
            return {pid for pid, _ in self.received}


def _sender(ancillary: list[tuple[int, int, bytes]]) -> int:
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            return int.from_bytes(data[:4], "little")
    return 0


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[Listener]:
    listening = Listener(str(tmp_path / "notify.sock"))
    yield listening
    listening.sock.shutdown(socket.SHUT_RDWR)
    listening.sock.close()


def test_ready_status_watchdog_and_stopping_reach_systemd(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path,
    listener: Listener,
) -> None:
    env = {"NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "400000"}
    daemon = run_daemon(
        "run", "--config", str(fast_config), "--state-dir", str(tmp_path / "s"), env=env
    )
    ready = listener.wait_for("READY=1")
    listener.wait_for("STATUS=", after=ready)
    second_ping = listener.wait_for("WATCHDOG=1", after=listener.wait_for("WATCHDOG=1") + 1)
    daemon.signal(signal.SIGTERM)
    listener.wait_for("STOPPING=1", after=second_ping)
    assert daemon.wait_exit() == 0
    assert listener.messages().count("WATCHDOG=1") >= 2


def test_workers_do_not_inherit_the_notify_socket(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path,
    listener: Listener,
) -> None:
    """Only the main process may notify (NotifyAccess=main): every datagram comes from
    the supervisor's pid."""
    daemon = run_daemon(
        "run", "--config", str(fast_config), "--state-dir", str(tmp_path / "s"),
        "--stop-after", "2", env={"NOTIFY_SOCKET": listener.path, "WATCHDOG_USEC": "400000"},
    )
    assert daemon.wait_exit() == 0
    listener.wait_for(listener.mark())  # datagrams are in order: all of the daemon's are read
    assert listener.senders() - {os.getpid()} == {daemon.proc.pid}


def test_a_full_notify_socket_never_stalls_supervision(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path
) -> None:
    """Nobody reads the socket: restarts and a prompt stop still happen, and the failure
    to notify is logged once."""
    path = str(tmp_path / "notify.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as unread:
        unread.bind(path)
        senders = fill(path)
        env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "400000"}
        daemon = run_daemon(
            "run", "--config", str(fast_config), "--state-dir", str(tmp_path / "s"), env=env
        )
        victim = daemon.wait_for(
            lambda e: e.get("event") == "update.completed" and e.get("account") == "alpha"
        )
        os.kill(victim["pid"], signal.SIGKILL)
        daemon.wait_for(
            lambda e: e.get("event") == "worker.restarted" and e.get("account") == "alpha"
        )
        daemon.signal(signal.SIGTERM)
        assert daemon.wait_exit(timeout=DEADLINE_S) == 0
        for sender in senders:
            sender.close()
    [failed] = daemon.named("sd_notify.failed")
    assert failed["socket"] == path and "temporarily unavailable" in failed["error"]

