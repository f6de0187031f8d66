"""sd_notify(3) in the standard library: tell systemd we are ready, alive, reloading, stopping.

Each message is one datagram of newline-separated `KEY=value` fields sent to the AF_UNIX
socket named by $NOTIFY_SOCKET (a leading `@` names an abstract socket). Without the
variable every method is a no-op, so the same code runs under daemon(8) or a terminal.
The environment is passed in explicitly: nothing here reads `os.environ` by itself.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping, MutableMapping

import structlog

log = structlog.get_logger("service.supervisor.sd_notify")

NOTIFY_SOCKET = "NOTIFY_SOCKET"
WATCHDOG_USEC = "WATCHDOG_USEC"
WATCHDOG_PID = "WATCHDOG_PID"
# What a worker must not inherit: with NotifyAccess=main systemd would ignore its messages,
# and a worker pinging the watchdog would hide a hung supervisor.
NOTIFY_VARIABLES = (NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID)


class Notifier:
    """Sends sd_notify messages to one socket address; `None` makes every call a no-op."""

    def __init__(self, address: str | None) -> None:
        self.address = address
        self._failed = False

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Notifier:
        return cls(socket_address(env.get(NOTIFY_SOCKET, "")))

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def ready(self) -> None:
        self.send("READY=1")

    def status(self, text: str) -> None:
        """A one-line status for `systemctl status`; newlines would end the field early."""
        self.send("STATUS=" + " ".join(text.splitlines()))

    def watchdog(self) -> None:
        self.send("WATCHDOG=1")

    def reloading(self) -> None:
        """Call before applying a reload; call `ready()` once it is applied (or refused)."""
        self.send("RELOADING=1", f"MONOTONIC_USEC={monotonic_usec()}")

    def stopping(self) -> None:
        self.send("STOPPING=1")

    def extend_timeout(self, usec: int) -> None:
        """Ask for `usec` more microseconds to finish starting, reloading or stopping."""
        if usec <= 0:
            raise ValueError(f"extend_timeout: usec must be positive, got {usec}")
        self.send(f"EXTEND_TIMEOUT_USEC={usec}")

    def send(self, *fields: str) -> None:
        if self.address is None:
            return
        try:
            _send_datagram(self.address, "\n".join(fields).encode())
        except OSError as error:
            # Notification is advisory: systemd may be restarting, busy (a full queue) or the
            # socket gone. Failing or waiting here would turn a monitoring hiccup into an
            # outage, so report once and go on.
            self._report_failure(error)

    def _report_failure(self, error: OSError) -> None:
        if not self._failed:
            self._failed = True
            log.warning(
                "sd_notify.failed",
                socket=self.address,
                error=str(error),
                hint="messages are dropped and supervision goes on; further failures are "
                "not logged; check $NOTIFY_SOCKET and the unit's NotifyAccess=",
            )


def socket_address(value: str) -> str | None:
    """$NOTIFY_SOCKET as a socket address: `@name` becomes NUL + name; unset gives None."""
    if not value:
        return None
    if value.startswith("@"):
        return "\0" + value[1:]
    if value.startswith("/"):
        return value
    log.warning(
        "sd_notify.unsupported",
        socket=value,
        hint="only AF_UNIX paths and @abstract names are supported; not notifying",
    )
    return None


def watchdog_interval_s(env: Mapping[str, str], pid: int | None = None) -> float | None:
    """Half of $WATCHDOG_USEC in seconds, or None when no watchdog is asked of `pid`.

    `pid` defaults to this process; a $WATCHDOG_PID naming another process means the
    watchdog is someone else's job.
    """
    watched = env.get(WATCHDOG_PID, "")
    if watched and _parse_int(WATCHDOG_PID, watched) != (os.getpid() if pid is None else pid):
        return None
    usec = _parse_int(WATCHDOG_USEC, env.get(WATCHDOG_USEC, ""))
    return None if usec is None or usec <= 0 else usec / 2_000_000


def forget_notify_env(env: MutableMapping[str, str]) -> None:
    """Remove the notify variables, e.g. from `os.environ` before spawning workers."""
    for name in NOTIFY_VARIABLES:
        env.pop(name, None)


def monotonic_usec() -> int:
    """CLOCK_MONOTONIC in microseconds, the clock systemd compares MONOTONIC_USEC with."""
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000


def _parse_int(name: str, value: str) -> int | None:
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        log.warning(
            "sd_notify.ignored",
            variable=name,
            value=value,
            hint="expected a decimal integer; the watchdog is not pinged",
        )
        return None


def _send_datagram(address: str, payload: bytes) -> None:
    """Never blocks: a full queue (systemd busy or gone deaf) raises BlockingIOError
    (EAGAIN) rather than stalling the supervisor's loop; a missing or dead socket raises
    its own OSError (ENOENT, ECONNREFUSED...)."""
    kind = socket.SOCK_DGRAM | socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK
    with socket.socket(socket.AF_UNIX, kind) as sock:
        sock.connect(address)
        sock.send(payload, socket.MSG_DONTWAIT)
