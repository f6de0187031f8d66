"""Measure supervision on the real daemon: SIGKILL to the replacement's first update, and
the supervisor's CPU use while its workers idle. Driven by `regime-trader bench
supervision`."""

from __future__ import annotations

import os
import signal
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from service.bench.daemon_harness import (
    TWO_ACCOUNT_INSTRUMENTS,
    DaemonProcess,
    Event,
    two_account_settings,
    write_config,
)

INSTRUMENTS = TWO_ACCOUNT_INSTRUMENTS.replace('"BRK.B"', '"JPM"')
SUPERVISION = """
[supervision]
backoff_initial_s = 0.05
restart_intensity = 100
global_intensity = 100
"""


def _start(folder: Path, mode: str, pace_s: float) -> DaemonProcess:
    clock = f'mode = "{mode}"\npace_s = {pace_s}'
    write_config(folder, two_account_settings(clock=clock, window=64, sections=SUPERVISION),
                 INSTRUMENTS)
    args = ["run", "--config", str(folder / "service.toml"), "--state-dir", str(folder / "s")]
    return DaemonProcess(args, cwd=folder)


def _is_update(account: str, not_pid: int | None = None) -> Any:
    def match(e: Event) -> bool:
        return (
            e.get("event") == "update.completed"
            and e.get("account") == account
            and e.get("pid") != not_pid
        )

    return match


def kill_to_first_update(kills: int) -> list[float]:
    """Seconds from SIGKILL of alpha's worker to its replacement's first update."""
    with tempfile.TemporaryDirectory() as tmp:
        daemon = _start(Path(tmp), "fast", 1.0)
        try:
            samples = []
            for _ in range(kills):
                victim = daemon.wait_for(_is_update("alpha"), timeout=120)
                daemon.events.clear()
                t0 = time.monotonic()
                os.kill(victim["pid"], signal.SIGKILL)
                daemon.wait_for(_is_update("alpha", not_pid=victim["pid"]), timeout=120)
                samples.append(time.monotonic() - t0)
            return samples
        finally:
            daemon.signal(signal.SIGTERM)
            daemon.wait_exit()


def idle_cpu(seconds: float) -> dict[str, float]:
    """CPU share of the supervisor (and of all workers) while the workers wait for a bar."""
    with tempfile.TemporaryDirectory() as tmp:
        daemon = _start(Path(tmp), "paced", 3600.0)
        try:
            for account in ("alpha", "beta"):
                daemon.wait_for(_is_update(account), timeout=120)
            workers = [e["pid"] for e in daemon.named("worker.started")]
            before = _cpu_s(daemon.proc.pid), sum(_cpu_s(p) for p in workers)
            time.sleep(seconds)  # the measurement window itself, not a wait for an event
            after = _cpu_s(daemon.proc.pid), sum(_cpu_s(p) for p in workers)
            return {
                "supervisor_cpu_percent": 100 * (after[0] - before[0]) / seconds,
                "workers_cpu_percent": 100 * (after[1] - before[1]) / seconds,
                "window_s": seconds,
            }
        finally:
            daemon.signal(signal.SIGTERM)
            daemon.wait_exit()


def _cpu_s(pid: int) -> float:
    """utime + stime of a process, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(kills: int = 5, idle_s: float = 10.0) -> dict[str, Any]:
    samples = kill_to_first_update(kills)
    return {
        "kill_to_first_update_s": {
            "median": statistics.median(samples),
            "max": max(samples),
            "samples": samples,
        },
        "idle": idle_cpu(idle_s),
    }
