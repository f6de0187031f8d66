"""The shared device's process: one device serving every account's warm runs
(`[model] shared_device`; gpu_backend/device_server.py says why). The supervisor starts
it before the workers and again if it dies (service/supervisor/device_handle.py); a
worker that cannot reach it runs its batches on its own device meanwhile."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from multiprocessing.connection import Listener
from pathlib import Path

import structlog

from service.exit_codes import EX_UNAVAILABLE
from service.logs import configure_logging

log = structlog.get_logger("service.device_process")


def device_main(address: str, authkey: bytes, level: str, log_format: str) -> None:
    """Entry point in the child process: serve until SIGTERM or SIGINT."""
    configure_logging(level, log_format, role="device")
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    threading.Thread(target=_watch_parent, args=(os.getppid(), stop), daemon=True).start()
    from gpu_backend.device_server import DeviceServer  # noqa: PLC0415 - after logging
    from gpu_backend.wgpu_backend import WgpuBackend  # noqa: PLC0415 - imports wgpu
    from gpu_backend.wgpu_device import GpuUnavailableError  # noqa: PLC0415

    try:
        backend = WgpuBackend()
    except GpuUnavailableError as error:  # no GPU here: restarting cannot help
        log.error("device.unavailable", reason=str(error), exit_code=EX_UNAVAILABLE,
                  next="the workers run their batches on their own backends; set "
                       "[model] shared_device = false on a host without a GPU")  # fmt: skip
        sys.exit(EX_UNAVAILABLE)
    with contextlib.suppress(FileNotFoundError):
        Path(address).unlink()  # a socket left by a process killed before it closed it
    listener = Listener(address, family="AF_UNIX", authkey=authkey)
    os.chmod(address, 0o600)
    log.info("device.serving", address=address, adapter=backend.adapter,
             numerics=backend.numerics)  # fmt: skip
    server = DeviceServer(backend)
    try:
        server.serve(listener, stop)
    finally:
        listener.close()
        server.close_connections()
        log.info("device.stopped", **server.figures())


def _watch_parent(parent: int, stop: threading.Event) -> None:
    """Stop when the supervisor is gone (killed: nobody would stop this process)."""
    while not stop.wait(1.0):
        if os.getppid() != parent:
            log.warning("device.orphaned", reason="the supervisor is gone; stopping")
            stop.set()
