"""Measure a reload on the real daemon: from an editor-style save (write a temporary
file, rename it over the instruments file) to `config.applied`. Driven by
`regime-trader bench reload`."""

from __future__ import annotations

import os
import signal
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from service.bench.daemon_harness import DaemonProcess

SETTINGS = """
instruments_file = "instruments.toml"

[[accounts]]
name = "alpha"

[clock]
pace_s = 1.0

[model]
window = 32
chains = 2

[logging]
format = "json"
"""

VERSIONS = (
    '[accounts.alpha]\nsymbols = ["SPY", "QQQ"]\n',
    '[accounts.alpha]\nsymbols = ["SPY", "QQQ", "IWM"]\n',
)


def rename_to_applied(edits: int) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "instruments.toml"
        path.write_text(VERSIONS[0])
        (folder / "service.toml").write_text(SETTINGS)
        daemon = DaemonProcess(
            ["run", "--config", str(folder / "service.toml"), "--state-dir", str(folder / "s")],
            cwd=folder,
        )
        try:
            daemon.wait_for(lambda e: e.get("event") == "update.completed", timeout=120)
            return [_one_edit(daemon, path, VERSIONS[(i + 1) % 2], i) for i in range(edits)]
        finally:
            daemon.signal(signal.SIGTERM)
            daemon.wait_exit()


def _one_edit(daemon: DaemonProcess, path: Path, text: str, done: int) -> float:
    tmp = path.with_name(".instruments.toml.tmp")
    tmp.write_text(text)
    saved = time.time()
    os.replace(tmp, path)
    event = daemon.wait_for(
        lambda e: (
            e.get("event") == "config.applied" and daemon.named("config.applied").index(e) >= done
        ),
        timeout=30,
    )
    return datetime.fromisoformat(event["timestamp"]).timestamp() - saved


def measure(edits: int = 20) -> dict[str, Any]:
    samples = sorted(rename_to_applied(edits))
    p99 = samples[min(len(samples) - 1, round(0.99 * (len(samples) - 1)))]
    return {
        "rename_to_applied_s": {
            "median": statistics.median(samples),
            "p99": p99,
            "max": samples[-1],
            "n": len(samples),
        }
    }
