"""The shared device's process, from the supervisor's side: started before the workers
where `[model] shared_device` is on (and the backend may be a GPU's), restarted with a
backoff when it dies (not when it found no GPU: exit 69), stopped last. Workers reach it
at `address` with `authkey` (in their WorkerSpec); while it is away they run their
batches on their own devices."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from multiprocessing.process import BaseProcess
from pathlib import Path

import structlog

from service.config_loader import LoadedConfig
from service.device_process import device_main
from service.exit_codes import EX_UNAVAILABLE
from service.supervisor.worker_handle import SPAWN
from service.supervisor.worker_start import child_environment

log = structlog.get_logger("service.supervisor")

FIRST_BACKOFF_S, MOST_BACKOFF_S = 1.0, 60.0


class SharedDevice:
    def __init__(self, config: LoadedConfig, log_format: str) -> None:
        model = config.settings.model
        self.enabled = model.shared_device and model.backend != "numpy"
        self.level, self.log_format = config.settings.logging.level, log_format
        self.process: BaseProcess | None = None
        self.restart_at: float | None = None
        self.backoff_s = FIRST_BACKOFF_S
        self.starts = 0
        self.started_at = 0.0
        self.unavailable = False  # the process found no GPU (exit 69): not restarted
        self._folder: Path | None = None
        self.authkey = os.urandom(32)

    @property
    def endpoint(self) -> tuple[str, bytes] | None:
        """(address, authkey) for the workers, or None where there is no shared device."""
        if not self.enabled:
            return None
        if self._folder is None:  # a private folder: a short path (AF_UNIX), mode 0700
            self._folder = Path(tempfile.mkdtemp(prefix="regime-trader-device-"))
        return str(self._folder / "device.sock"), self.authkey

    def start(self) -> None:
        endpoint = self.endpoint
        if endpoint is None:
            return
        process = SPAWN.Process(
            target=device_main,
            name="regime-trader:device",
            args=(endpoint[0], endpoint[1], self.level, self.log_format),
        )
        with child_environment():
            process.start()
        self.process, self.restart_at = process, None
        self.started_at = time.monotonic()
        self.starts += 1
        log.info("device.started", pid=process.pid, address=endpoint[0], starts=self.starts)

    def poll(self, now: float, stopping: bool) -> None:
        """Restart a dead device process after its backoff (doubling; back to the first
        once a process has lived past the longest)."""
        process = self.process
        if process is None or stopping:
            return
        if process.is_alive():
            if now - self.started_at > MOST_BACKOFF_S:
                self.backoff_s = FIRST_BACKOFF_S
            return
        if process.exitcode == EX_UNAVAILABLE:  # no GPU: said by the process, not retried
            self.process, self.unavailable = None, True
            return
        if self.restart_at is None:
            self.restart_at = now + self.backoff_s
            log.warning("device.exited", exit_code=process.exitcode,
                        restart_in_s=self.backoff_s,
                        next="the workers run their batches themselves meanwhile")  # fmt: skip
            self.backoff_s = min(MOST_BACKOFF_S, 2 * self.backoff_s)
        elif now >= self.restart_at:
            self.start()

    def state(self) -> dict[str, object]:
        """For `status` (the runtime file): off, running, restarting, unavailable (no
        GPU), or stopped; its pid and how many times it was started."""
        process = self.process
        if not self.enabled:
            state = "off"
        elif self.unavailable:
            state = "unavailable"
        elif process is not None and process.is_alive():
            state = "running"
        else:
            state = "restarting" if self.restart_at is not None else "stopped"
        pid = process.pid if process is not None and state == "running" else None
        return {"state": state, "pid": pid, "starts": self.starts}

    def stop(self) -> None:
        process = self.process
        if process is not None and process.is_alive():
            process.terminate()
            process.join(10.0)
            if process.is_alive():
                process.kill()
                process.join(5.0)
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
