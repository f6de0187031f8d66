"""sd_notify: exact datagrams on a real AF_UNIX socket, path or abstract; a no-op without one."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from service.supervisor.sd_notify import (
    Notifier,
    forget_notify_env,
    socket_address,
    watchdog_interval_s,
)
from tests.supervision.full_socket import fill

DEADLINE_S = 60.0  # a deadline for a datagram already sent, never a wait for time to pass


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    """A datagram socket bound in tmp_path, as systemd binds /run/systemd/notify."""
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(DEADLINE_S)
        yield sock, str(path)


def received(sock: socket.socket) -> bytes:
    """The next datagram; the socket's timeout is the deadline."""
    return sock.recv(4096)


def test_ready_is_one_datagram_to_the_path_socket(listener: tuple[socket.socket, str]) -> None:
    sock, path = listener
    Notifier.from_env({"NOTIFY_SOCKET": path}).ready()
    assert received(sock) == b"READY=1"


def test_an_at_sign_names_an_abstract_socket() -> None:
    name = f"regime-trader-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(DEADLINE_S)
        Notifier.from_env({"NOTIFY_SOCKET": "@" + name}).watchdog()
        assert received(sock) == b"WATCHDOG=1"


def test_each_message_is_its_exact_datagram(listener: tuple[socket.socket, str]) -> None:
    sock, path = listener
    notifier = Notifier.from_env({"NOTIFY_SOCKET": path})
    notifier.status("2 accounts trading")
    notifier.watchdog()
    notifier.stopping()
    notifier.extend_timeout(30_000_000)
    assert [received(sock) for _ in range(4)] == [
        b"STATUS=2 accounts trading",
        b"WATCHDOG=1",
        b"STOPPING=1",
        b"EXTEND_TIMEOUT_USEC=30000000",
    ]


def test_a_multi_line_status_is_sent_as_one_line(listener: tuple[socket.socket, str]) -> None:
    sock, path = listener
    Notifier.from_env({"NOTIFY_SOCKET": path}).status("alpha parked\nbeta ok")
    assert received(sock) == b"STATUS=alpha parked beta ok"


def test_reloading_carries_the_monotonic_clock_in_microseconds(
    listener: tuple[socket.socket, str],
) -> None:
    sock, path = listener
    before = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    Notifier.from_env({"NOTIFY_SOCKET": path}).reloading()
    after = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
    first, second = received(sock).decode().split("\n")
    assert first == "RELOADING=1"
    key, value = second.split("=")
    assert key == "MONOTONIC_USEC" and before <= int(value) <= after


def test_without_notify_socket_every_call_is_a_no_op() -> None:
    notifier = Notifier.from_env({})
    assert not notifier.enabled
    notifier.ready()
    notifier.status("nobody listens")
    notifier.watchdog()
    notifier.reloading()
    notifier.stopping()
    notifier.extend_timeout(1)


def test_a_vanished_socket_is_logged_once_and_swallowed(tmp_path: Path) -> None:
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
    path.unlink()
    notifier = Notifier.from_env({"NOTIFY_SOCKET": str(path)})
    with capture_logs() as logs:
        notifier.watchdog()
        notifier.watchdog()
    failures = [e for e in logs if e["event"] == "sd_notify.failed"]
    assert len(failures) == 1 and failures[0]["socket"] == str(path)


def test_a_full_socket_never_blocks_and_is_logged_once(tmp_path: Path) -> None:
    path = str(tmp_path / "notify")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as unread:
        unread.bind(path)
        senders = fill(path)
        notifier = Notifier.from_env({"NOTIFY_SOCKET": path})
        with capture_logs() as logs:
            sending = threading.Thread(target=lambda: [notifier.watchdog() for _ in range(3)],
                                       daemon=True)
            sending.start()
            sending.join(DEADLINE_S)
        assert not sending.is_alive(), "sd_notify blocked on a full socket"
        for sender in senders:
            sender.close()
    failures = [e for e in logs if e["event"] == "sd_notify.failed"]
    assert len(failures) == 1 and failures[0]["socket"] == path


@pytest.mark.parametrize("kind", ["refused", "not a socket", "missing directory"])
def test_any_unreachable_socket_is_logged_once_and_swallowed(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "notify"
    if kind == "refused":  # bound once, then its listener closed: ECONNREFUSED
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        listening.bind(str(path))
        listening.close()
    elif kind == "not a socket":
        path.write_text("")
    else:
        path = tmp_path / "gone" / "notify"
    notifier = Notifier.from_env({"NOTIFY_SOCKET": str(path)})
    with capture_logs() as logs:
        notifier.ready()
        notifier.status("still here")
    assert [e["event"] for e in logs] == ["sd_notify.failed"]


def test_an_unsupported_address_disables_notification_with_a_warning() -> None:
    with capture_logs() as logs:
        assert socket_address("vsock:2:1234") is None
    assert logs[0]["event"] == "sd_notify.unsupported"


def test_a_non_positive_timeout_extension_is_refused() -> None:
    with pytest.raises(ValueError, match="usec must be positive, got 0"):
        Notifier(None).extend_timeout(0)


def test_the_watchdog_is_pinged_at_half_its_period() -> None:
    assert watchdog_interval_s({"WATCHDOG_USEC": "30000000"}) == 15.0
    mine = {"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}
    assert watchdog_interval_s(mine) == 15.0


def test_no_watchdog_when_unset_or_meant_for_another_process() -> None:
    assert watchdog_interval_s({}) is None
    assert watchdog_interval_s({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}, pid=4242) is None
    assert watchdog_interval_s({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "4242"},
                               pid=4242) == 15.0


def test_a_malformed_watchdog_period_means_no_watchdog_and_a_warning() -> None:
    with capture_logs() as logs:
        assert watchdog_interval_s({"WATCHDOG_USEC": "30s"}) is None
    assert logs[0]["event"] == "sd_notify.ignored" and logs[0]["variable"] == "WATCHDOG_USEC"


def test_workers_can_be_kept_from_inheriting_the_notify_variables() -> None:
    env = {"NOTIFY_SOCKET": "/run/systemd/notify", "WATCHDOG_USEC": "1", "WATCHDOG_PID": "7",
           "PATH": "/usr/bin"}
    forget_notify_env(env)
    assert env == {"PATH": "/usr/bin"}
