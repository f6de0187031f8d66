"""From one daemon run's events to the `bench round` figures (see service/bench/round.py).

Pure: reads the `worker.started`, `update.completed` and `model.sampled` events, never the
clock.
"""

from __future__ import annotations

import math
import os
import platform
import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from service.bench.daemon_harness import Event

STAGES = ("fetch", "model", "strategy", "checkpoint", "orders")
RELEASE = "bar n is released at A + n * pace_s (A: the wall anchor shared by every account)"


class RoundBenchError(RuntimeError):
    """The daemon did not give a measurable run."""


@dataclass(frozen=True)
class RoundRun:
    events: list[Event]
    accounts: list[str]
    anchor: datetime  # wall time of the first bar's release
    pace_s: float
    interval: timedelta  # market time between bars

    def ready_at(self) -> dict[str, float]:
        """Wall time of each account's first `worker.started` (ready to wait for bars)."""
        ready: dict[str, float] = {}
        for e in self.events:
            if e.get("event") == "worker.started":
                ready.setdefault(str(e["account"]), _stamp(e))
        return ready

    def updates(self) -> list[Event]:
        return [e for e in self.events if e.get("event") == "update.completed"]

    def release(self, n: int) -> float:
        """Wall time (epoch s) of bar n's release, by PacedClock's arithmetic."""
        return self.anchor.timestamp() + n * round(self.pace_s * 1_000_000) / 1e6


def _stamp(event: Event) -> float:
    return datetime.fromisoformat(str(event["timestamp"])).timestamp()


def _stats(values: list[float], keys: tuple[str, ...] = ("p50", "p99", "max")) -> Any:
    if not values:
        return None
    arr = np.asarray(values, dtype=np.float64)
    every = {"p50": float(np.median(arr)), "p99": float(np.percentile(arr, 99)),
             "max": float(arr.max())}
    return {k: round(every[k], 3) for k in keys}


def rounds(run: RoundRun) -> list[dict[str, Any]]:
    """Each bar's round: its index, kind, latency and its slowest account's model stage."""
    updates = run.updates()
    first = {e["bar_time"] for e in updates if e["seq"] == 1}
    if len(first) != 1:
        raise RoundBenchError(f"the accounts' first updates are at different bars: {first}")
    first_bar = datetime.fromisoformat(first.pop())
    ended = {(e["account"], e["seq"]): _stamp(e) for e in updates}
    by_bar: dict[str, list[Event]] = defaultdict(list)
    for e in updates:
        by_bar[e["bar_time"]].append(e)
    return [
        _round(run, (datetime.fromisoformat(bar) - first_bar) // run.interval, events, ended)
        for bar, events in sorted(by_bar.items())
    ]


def _round(
    run: RoundRun, n: int, events: list[Event], ended: dict[tuple[str, int], float]
) -> dict[str, Any]:
    release = run.release(n)
    busy = any(ended.get((e["account"], e["seq"] - 1), 0.0) > release for e in events)
    if len(events) < len(run.accounts):
        kind = "incomplete"
    else:
        kind = "cold" if all(e["seq"] == 1 for e in events) else "overlapped" if busy else "warm"
    last = max(e["committed_at"] for e in events)
    return {
        "bar": n,
        "kind": kind,
        "ms": None if kind == "incomplete" else round((last - release) * 1e3, 3),
        "wake_ms": round((min(e["started_at"] for e in events) - release) * 1e3, 3),
        "model_ms_max": max(e["timings_ms"].get("model", 0.0) for e in events),
    }


REWEIGH_COUNTS = ("reweighed", "sampled_at_bar", "min_share", "at_bar_no_draws",
                  "at_bar_not_moved", "at_bar_weights", "at_bar_gate")


def _reweighing(updates: list[Event]) -> dict[str, Any] | None:
    """[model] sample_between_bars: instruments reweighed and sampled at the bar per warm
    update (p50, max), and the smallest share of draws the weights kept; None without."""
    models = [e.get("model", {}) for e in updates if "reweighed" in e.get("model", {})]
    if not models:
        return None
    shares = [m["min_share"] for m in models if not math.isnan(m["min_share"])]
    return {**{k: _stats([m[k] for m in models], ("p50", "max"))
               for k in ("reweighed", "sampled_at_bar")},
            "min_share": min(shares) if shares else None,
            # why instruments went to the bar's sampler, summed over the warm updates
            "at_bar_why": {k[len("at_bar_"):]: sum(m.get(k, 0.0) for m in models)
                           for k in REWEIGH_COUNTS if k.startswith("at_bar_")}}  # fmt: skip


def _sampled(run: RoundRun, after: int) -> list[Event]:
    """The `model.sampled` events of updates after seq `after` (the warm ones)."""
    return [e for e in run.events if e.get("event") == "model.sampled" and e["seq"] > after]


def _at_risk(sampled: list[Event]) -> dict[str, Any] | None:
    """Instruments at risk of the next bar's gate, run on between bars: per sampler (p50,
    max) and in all by the share of the gate they ran to; None where none was probed."""
    counts = [e["at_risk"] for e in sampled if "at_risk" in e]
    if not counts:
        return None
    margins: dict[str, int] = {}
    for e in sampled:
        for margin, n in e.get("at_risk_margins", {}).items():
            margins[margin] = margins.get(margin, 0) + n
    return {"per_update": _stats(counts, ("p50", "max")), "in_all": sum(counts),
            "by_margin": dict(sorted(margins.items(), reverse=True))}


def _device(updates: list[Event], key: str) -> float:
    return float(statistics.median(e["device"][key] for e in updates)) if updates else 0.0


def _one(values: set[str]) -> str:
    return values.pop() if len(values) == 1 else "mixed: " + ", ".join(sorted(values))


def cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _model_parts(updates: list[dict[str, Any]]) -> dict[str, dict[str, float] | None]:
    """The model stage's own parts over the warm updates (the backend's run, the host's
    summary, the extension blocks; and `diagnostics`, the wait after the commit and orders
    for the unconverged instruments' diagnostics), p50 and p99; a part an update did not
    run (no extension) counts as 0 ms there."""
    counts = {"gradient_evals", "extended", *REWEIGH_COUNTS}
    parts = sorted({k for e in updates for k in e.get("model", {})} - counts)
    return {k: _stats([e.get("model", {}).get(k, 0.0) for e in updates], ("p50", "p99"))
            for k in parts}


def _figures_of(event: Event) -> dict[str, Any]:
    return {k: v for k, v in event.items()
            if k not in ("event", "level", "timestamp", "pid", "role", "logger")}  # fmt: skip


def figures(run: RoundRun) -> dict[str, Any]:
    """round_ms, stages_ms, device traffic, and what ran it."""
    listed = rounds(run)
    updates = run.updates()
    warm_updates = [e for e in updates if e["seq"] > 1]
    cold_updates = [e for e in updates if e["seq"] == 1]
    by_kind = {k: [r["ms"] for r in listed if r["kind"] == k]
               for k in ("cold", "warm", "overlapped", "incomplete")}
    backend = _one({e["backend"] for e in updates})
    adapter = _one({e["adapter"] for e in updates})
    return {
        "round_ms": {"cold": _stats(by_kind["cold"]), "warm": _stats(by_kind["warm"]),
                     "warm_overlapped": _stats(by_kind["overlapped"])},
        "stages_ms": {s: _stats([e["timings_ms"].get(s, 0.0) for e in warm_updates],
                                ("p50", "p99")) for s in STAGES},
        "cold_stages_ms": {s: _stats([e["timings_ms"].get(s, 0.0) for e in cold_updates],
                                     ("p50", "max")) for s in STAGES},
        "model_parts_ms": _model_parts(warm_updates),
        # [model] sample_between_bars: each update's sampler, after its commit
        "sampled_ms": _stats([e["duration_ms"] for e in _sampled(run, 1)], ("p50", "p99")),
        # ... once the other accounts' bars were done (service/worker/sampler_turn.py)
        "sampled_waited_ms": _stats([e.get("waited_ms", 0.0) for e in _sampled(run, 1)],
                                    ("p50", "max")),
        # the cold update's: the first, which a paced bar may have to wait for
        "sampled_after_cold_ms": _stats([e["duration_ms"] for e in _sampled(run, 0)
                                         if e["seq"] == 1], ("p50", "max")),
        "at_risk": _at_risk(_sampled(run, 0)),
        "sampled_submissions_per_update": _device(_sampled(run, 1), "submissions"),
        "sampled_upload_bytes_per_update": _device(_sampled(run, 1), "upload_bytes"),
        "reweighing": _reweighing(warm_updates),
        "submissions_per_update": _device(warm_updates, "submissions"),
        "upload_bytes_per_update": _device(warm_updates, "upload_bytes"),
        "cold_submissions_per_update": _device(cold_updates, "submissions"),
        "cold_upload_bytes_per_update": _device(cold_updates, "upload_bytes"),
        "backend": backend,
        "adapter": adapter,
        "machine": {"host": platform.node(), "cpu": cpu_model(), "cpus": os.cpu_count(),
                    "gpu": adapter if backend == "wgpu" else None},
        "rounds": {**{k: len(v) for k, v in by_kind.items()},
                   "skipped": listed[-1]["bar"] + 1 - len(listed)},  # no account took them
        "wake_ms": _stats([r["wake_ms"] for r in listed if r["kind"] == "warm"], ("p50", "max")),
        "updates": len(updates),
        # the shared device's own figures (`device.stopped`), where the run had one
        "device_process": next((_figures_of(e) for e in run.events
                                if e.get("event") == "device.stopped"), None),
        "release": RELEASE,
        "round_list": listed,
    }
