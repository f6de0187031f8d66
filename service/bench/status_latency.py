"""Measure `regime-trader status` as an operator meets it: a fresh process per call,
against a running daemon's state directory. Driven by `regime-trader bench status`.

A daemon on the embedded default (two accounts, the simulated broker) runs in a temporary
folder while `status` (and `status --json`) is called `runs` times each; the figure is
the wall time of the whole process, start-up and imports included, since that is what
a person or a monitoring script waits for. The daemon and the calls share a cache folder
of their own, as a user's daemon and `status` do: the daemon remembers the configuration
it validated (service/config_cache.py) and the calls find it. One more call, with an empty
cache folder, validates the configuration, as after an edit or for another user
(`validating_call_ms`).
"""

from __future__ import annotations

import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from service.bench.daemon_harness import DaemonProcess


def _call(state_dir: Path, cache: Path, *flags: str) -> float:
    command = [sys.executable, "-m", "service.cli", "status", "--state-dir", str(state_dir),
               *flags]
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, check=False, timeout=60, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):  # 1: printed, something is not healthy
        raise RuntimeError(f"status exited {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed * 1000.0


def _figures(samples: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(samples), 1),
            "min_ms": round(min(samples), 1), "max_ms": round(max(samples), 1)}


def measure(runs: int) -> dict[str, Any]:
    """Wall milliseconds of `status` and `status --json` beside a running daemon."""
    with tempfile.TemporaryDirectory() as tmp:
        state_dir, cache = Path(tmp) / "state", Path(tmp) / "cache"
        daemon = DaemonProcess(["run", "--state-dir", str(state_dir)], cwd=Path(tmp),
                               env={"XDG_CACHE_HOME": str(cache)})
        try:
            daemon.wait_for(lambda e: e.get("event") == "update.completed", timeout=300)
            validating = _call(state_dir, Path(tmp) / "empty-cache")
            text = [_call(state_dir, cache) for _ in range(runs)]
            as_json = [_call(state_dir, cache, "--json") for _ in range(runs)]
        finally:
            daemon.stop()
    return {
        "command": f"regime-trader bench status --runs {runs}",
        "host": platform.node(),
        "date": time.strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        # structlog loads rich when it is installed (the test extra brings it): ~70 ms
        "rich_installed": importlib.util.find_spec("rich") is not None,
        "runs": runs,
        "validating_call_ms": round(validating, 1),
        "status": _figures(text),
        "status_json": _figures(as_json),
    }
