"""The soak: the embedded default on a fast clock for a long run, sampled every minute.

Driven by `regime-trader prove soak --minutes M --json PATH`. Every sample records, per
process (the supervisor and each account's worker), the resident set size and the number
of open file descriptors (/proc, Linux); the size of the state folder (databases, WAL and
the simulated broker's books); and, from the `update.completed` events of the sample's
window, how many updates ran and their mean and worst duration. The samples are written
(JSON, rewritten after each sample, so a run cut short still leaves its figures) and
summed up against the pass mark: RSS growth under 5 % after warm-up, no growth in open
descriptors, database size bounded by retention.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from service.config_files import default_config_path

RSS_GROWTH_LIMIT = 0.05


@dataclass
class _Window:
    """What the log said since the last sample."""

    updates: int = 0
    duration_ms_sum: float = 0.0
    duration_ms_max: float = 0.0
    workers: dict[str, int] = field(default_factory=dict)
    seq: dict[str, int] = field(default_factory=dict)
    log_lines: int = 0
    log_bytes: int = 0


class _LogReader:
    """Reads the daemon's JSON lines as they come, keeping counts only (a soak must not
    hold its own log in memory)."""

    def __init__(self, stream: Any) -> None:
        self.lock = threading.Lock()
        self.window = _Window()
        self.workers: dict[str, int] = {}
        self.seq: dict[str, int] = {}
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                event = {}
            with self.lock:
                self.window.log_lines += 1
                self.window.log_bytes += len(line)
                self._note(event if isinstance(event, dict) else {})

    def _note(self, event: dict[str, Any]) -> None:
        name, account = event.get("event"), str(event.get("account", ""))
        if name == "worker.started":
            self.workers[account] = int(event["pid"])
        elif name == "update.completed":
            duration = float(event.get("duration_ms", 0.0))
            self.window.updates += 1
            self.window.duration_ms_sum += duration
            self.window.duration_ms_max = max(self.window.duration_ms_max, duration)
            self.seq[account] = int(event["seq"])

    def take(self) -> _Window:
        with self.lock:
            window, self.window = self.window, _Window()
            window.workers, window.seq = dict(self.workers), dict(self.seq)
            return window


def prepare(folder: Path, clock_mode: str = "fast") -> Path:
    """The embedded default, copied into `folder`, with the clock switched to `clock_mode`."""
    default = default_config_path()
    shutil.copy(default.with_name("instruments.toml"), folder / "instruments.toml")
    text = default.read_text()
    text = text.replace('mode = "paced"', f'mode = "{clock_mode}"', 1)
    text = text.replace('format = "auto"', 'format = "json"', 1)
    (folder / "service.toml").write_text(text)
    return folder / "service.toml"


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def open_fds(pid: int) -> int | None:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def sample(elapsed_s: float, supervisor: int, window: _Window, state_dir: Path) -> dict[str, Any]:
    processes = {"supervisor": supervisor, **{f"worker:{a}": p for a, p in window.workers.items()}}
    return {
        "elapsed_s": round(elapsed_s, 1),
        "rss_kib": {name: rss_kib(pid) for name, pid in processes.items()},
        "open_fds": {name: open_fds(pid) for name, pid in processes.items()},
        "pids": processes,
        "state_bytes": folder_bytes(state_dir),
        "state_files": {p.name: p.stat().st_size for p in sorted(state_dir.glob("*"))},
        "updates": window.updates,
        "update_ms_mean": round(window.duration_ms_sum / window.updates, 2)
        if window.updates else None,
        "update_ms_max": round(window.duration_ms_max, 2),
        "seq": window.seq,
        "log_lines": window.log_lines,
        "log_bytes": window.log_bytes,
        "gpu_objects": None,  # the numpy backend holds no wgpu objects
    }


def summarise(samples: list[dict[str, Any]], warmup_s: float) -> dict[str, Any]:
    """Growth after warm-up, per process: the pass mark of the issue."""
    warm = [s for s in samples if s["elapsed_s"] >= warmup_s] or samples[-1:]
    first, last = warm[0], warm[-1]
    per_process: dict[str, Any] = {}
    for name in last["rss_kib"]:
        rss = [s["rss_kib"].get(name) for s in warm if s["rss_kib"].get(name) is not None]
        fds = [s["open_fds"].get(name) for s in warm if s["open_fds"].get(name) is not None]
        pids = {s["pids"].get(name) for s in warm}
        if not rss or not fds:
            continue
        per_process[name] = {
            "rss_kib_first": rss[0], "rss_kib_last": rss[-1], "rss_kib_max": max(rss),
            "rss_growth": round(rss[-1] / rss[0] - 1, 4),
            "fds_first": fds[0], "fds_last": fds[-1], "fds_max": max(fds),
            "restarted": len(pids) > 1,
        }
    updates = sum(s["updates"] for s in samples)
    means = [s["update_ms_mean"] for s in warm if s["update_ms_mean"] is not None]
    return {
        "samples": len(samples),
        "warmup_s": warmup_s,
        "after_warmup_from_s": first["elapsed_s"],
        "to_s": last["elapsed_s"],
        "updates": updates,
        "update_ms_mean_first": means[0] if means else None,
        "update_ms_mean_last": means[-1] if means else None,
        "state_bytes_after_warmup": first["state_bytes"],
        "state_bytes_last": last["state_bytes"],
        "state_bytes_max": max(s["state_bytes"] for s in samples),
        "per_process": per_process,
        "pass_rss": all(p["rss_growth"] < RSS_GROWTH_LIMIT for p in per_process.values()),
        "pass_fds": all(p["fds_last"] <= p["fds_first"] for p in per_process.values()),
    }


def run_soak(
    minutes: float, out: Path, sample_s: float = 60.0, workdir: Path | None = None,
    warmup_s: float | None = None,
) -> dict[str, Any]:
    folder = workdir or Path(tempfile.mkdtemp(prefix="regime-trader-soak-"))
    folder.mkdir(parents=True, exist_ok=True)
    config, state_dir = prepare(folder), folder / "state"
    env = {**os.environ, "REGIME_TRADER_LOG_FORMAT": "json"}
    args = [sys.executable, "-m", "service.cli", "run", "--config", str(config),
            "--state-dir", str(state_dir)]
    with open(folder / "stderr.log", "w") as stderr:
        proc = subprocess.Popen(args, cwd=folder, env=env, stdout=subprocess.PIPE,
                                stderr=stderr, text=True)
        reader = _LogReader(proc.stdout)
        samples: list[dict[str, Any]] = []
        started = time.monotonic()
        try:
            deadline = started + minutes * 60
            while time.monotonic() < deadline and proc.poll() is None:
                time.sleep(min(sample_s, max(0.0, deadline - time.monotonic())))  # the cadence
                state_dir.mkdir(parents=True, exist_ok=True)
                samples.append(sample(time.monotonic() - started, proc.pid, reader.take(),
                                      state_dir))
                _write(out, folder, samples, None)
        finally:
            proc.send_signal(signal.SIGTERM)
            exit_code = proc.wait(120)
        summary = summarise(samples, warmup_s if warmup_s is not None else minutes * 60 / 6)
        summary["exit_code"] = exit_code
        summary["stopped_early"] = time.monotonic() - started < minutes * 60 - sample_s
        _write(out, folder, samples, summary)
        return summary


def _write(out: Path, folder: Path, samples: list[dict[str, Any]],
           summary: dict[str, Any] | None) -> None:
    document = {"folder": str(folder), "summary": summary, "samples": samples}
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_text(json.dumps(document, indent=1) + "\n")
    tmp.replace(out)
