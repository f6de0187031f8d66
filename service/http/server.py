"""Serving the endpoint: the standard library's WSGI server, a thread per request.

Why this and not a framework or a hand-written server: the endpoint is six read-only
routes, so WSGI (PEP 3333) is the whole interface it needs; `wsgiref` is the reference
WSGI server and ships with Python (no dependency to keep up with), and the HTTP parsing
is the standard library's `http.server`, not ours. `/metrics` is prometheus_client's own
WSGI app over a registry of our own (content negotiation and compression included), so
the format is the library's, not ours. A thread per request (socketserver.ThreadingMixIn,
as prometheus_client's own `start_http_server` does) means a slow client never blocks
another, and a socket timeout ends a client that stalls. The server runs on a daemon
thread of the supervisor; it only reads the supervisor's state.

Binding happens before any worker starts, so a port that cannot be had stops the daemon
at once with an exit code that says whether to wait (75) or to fix the address (78).
"""

from __future__ import annotations

import errno
import socket
import threading
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from service.exit_codes import EX_CONFIG, EX_TEMPFAIL
from service.http.types import WsgiApp
from service.settings_ops import parse_listen

CLIENT_TIMEOUT_S = 10.0  # a client that sends nothing for this long is dropped
POLL_S = 0.25  # how quickly stop() is answered


class BindError(Exception):
    """The address cannot be served; `exit_code` is 75 (try again later) or 78 (fix it)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class _Handler(WSGIRequestHandler):
    timeout = CLIENT_TIMEOUT_S

    def log_message(self, format: str, *args: Any) -> None:
        """No access log: the daemon's stdout is its JSON log, and a scrape every few
        seconds is not an event."""


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a slow client never holds the supervisor's exit
    block_on_close = False


class _ThreadingServer6(_ThreadingServer):
    address_family = socket.AF_INET6


class EndpointServer:
    def __init__(self, listen: str, app: WsgiApp) -> None:
        self.listen = listen
        self.app = app
        self._server: _ThreadingServer | None = None
        self._thread: threading.Thread | None = None

    def bind(self) -> str:
        """Bind the address; returns the one served ("HOST:PORT", the real port). BindError
        when it cannot be had."""
        host, port = parse_listen(self.listen)
        server_class = _ThreadingServer6 if ":" in host else _ThreadingServer
        try:
            server = server_class((host, port), _Handler)
        except OSError as error:
            raise BindError(*bind_failure(self.listen, error)) from error
        server.set_app(self.app)
        self._server = server
        bound_host, bound_port = str(server.server_address[0]), int(server.server_address[1])
        return f"[{bound_host}]:{bound_port}" if ":" in bound_host else f"{bound_host}:{bound_port}"

    def start(self) -> None:
        if self._server is None:
            raise RuntimeError("bind() first")
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(POLL_S,), name="http-endpoint",
            daemon=True)  # fmt: skip
        self._thread.start()

    def stop(self) -> None:
        if self._server is None:
            return
        if self._thread is not None:
            self._server.shutdown()  # waits for serve_forever to return
            self._thread.join()
        self._server.server_close()
        self._server = self._thread = None


def bind_failure(listen: str, error: OSError) -> tuple[str, int]:
    """What went wrong binding `listen`, what to do, and the exit code."""
    if isinstance(error, socket.gaierror):
        return f"{listen}: the host name does not resolve ({error}); use an IP address " \
            "such as 127.0.0.1", EX_CONFIG
    if error.errno == errno.EADDRINUSE:  # the other listener may go away: try again later
        return f"{listen}: the port is in use by another process; stop it, or set another " \
            "port ([http] listen or run --http)", EX_TEMPFAIL
    if error.errno == errno.EACCES:
        return f"{listen}: permission denied (ports below 1024 need privileges); choose a " \
            "port above 1024", EX_CONFIG
    if error.errno == errno.EADDRNOTAVAIL:
        return f"{listen}: not an address of this host; use one of its addresses, or " \
            "127.0.0.1", EX_CONFIG
    return f"{listen}: cannot listen ({error}); check [http] listen", EX_CONFIG
