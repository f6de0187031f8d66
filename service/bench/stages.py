"""`regime-trader bench stages`: the host side of an update, stage by stage.

A real Trader (service.worker.trader) on the synthetic market and the simulated broker, in
a temporary folder, with N instruments in one account and the whole rotation in every
update. The model stage runs for real, but with a spec of very few iterations (the model
is measured by `bench model` and `bench round`): what is timed here is fetch, strategy,
checkpoint and orders, read from each update's own `timings_ms`.

The first update is cold (a full window of history per instrument) and is reported apart;
the warm updates that follow each take one new bar per instrument. The first warm
update's decisions buy most instruments, so the orders stage is measured with many
intents there and with few or none afterwards: its figure per intent is reported too.
"""

from __future__ import annotations

import platform
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from structlog.testing import capture_logs

from gpu_backend import select_backend
from regime_model.update import ModelSpec
from service.config_loader import LoadedConfig, load_config
from service.state.store import StateStore
from service.worker import assembly
from service.worker.sampler_turn import copy_wal_back
from service.worker.trader import BarCursor, Trader

STAGES = ("reconcile", "fetch", "model", "strategy", "checkpoint", "orders")
ACCOUNT = "alpha"
# Few iterations keep the model stage cheap (4 draws is the least ModelSpec allows); with
# so few draws no estimate meets the gate, so the bounds are lifted (and no update runs
# on): every estimate counts as converged and the strategy trades, as a daemon's does
# once its chains have mixed.
CHEAP_SPEC: dict[str, Any] = {
    "warmup_cold": 2, "warmup_warm": 0, "draws": 4, "steps_min": 1, "steps_max": 1,
    "cold_steps_min": 1, "cold_steps_max": 1,
    "mcse_max": 1e9, "vol_mcse_max": 1e9, "divergence_rate_max": 1.0, "two_readings": 2.0,
}


def symbols(count: int) -> list[str]:
    """`count` distinct valid symbols: S0000, S0001, ..."""
    return [f"S{i:04d}" for i in range(count)]


def write_config(folder: Path, instruments: int, window: int) -> LoadedConfig:
    """One account holding `instruments` symbols, the synthetic market, the simulated
    broker (funded so that every instrument's share buys whole shares)."""
    listed = ", ".join(f'"{s}"' for s in symbols(instruments))
    (folder / "instruments.toml").write_text(f"[accounts.{ACCOUNT}]\nsymbols = [{listed}]\n")
    (folder / "service.toml").write_text(
        'instruments_file = "instruments.toml"\n\n[[accounts]]\nname = "alpha"\n\n'
        f'[clock]\nmode = "fast"\n\n[model]\nwindow = {window}\nbackend = "numpy"\n'
        "sample_between_bars = false\n\n"  # the bar's sampler, as the stage figures were made
        f"[broker.sim]\nstarting_cash = {1_000_000.0 * instruments}\n"
    )
    return load_config(folder / "service.toml")


class Rig:
    """The trader and its parts, driven bar by bar."""

    def __init__(self, config: LoadedConfig, state: Path, backend: str) -> None:
        self.market = assembly.build_market(config)
        self.first = assembly.first_trading_bar(config, self.market, ())
        self.cursor = BarCursor(self.first - self.market.bar_interval)
        self.store = StateStore(assembly.state_path(state, ACCOUNT), account=ACCOUNT)
        self.broker = assembly.build_broker(config, ACCOUNT, state, self.market, self.cursor)
        self.trader = Trader(ACCOUNT, config, self.market, self.broker, self.store,
                             select_backend(backend), self.cursor, self.cursor)
        self.trader.spec = ModelSpec(window=self.trader.spec.window, **CHEAP_SPEC)

    def bar(self, n: int) -> datetime:
        return self.first + n * self.market.bar_interval

    def update(self, n: int) -> dict[str, Any]:
        """One update at bar n, then the WAL copied back as the worker's loop does after
        each bar (service/state/wal_backfill.py); the update's `update.completed` event,
        the copy's time in it as `backfill_ms`."""
        with capture_logs() as logs:
            self.trader.update(self.bar(n))
        [done] = [e for e in logs if e["event"] == "update.completed"]
        started = time.perf_counter()
        copy_wal_back(self.store)
        return {**done, "backfill_ms": 1e3 * (time.perf_counter() - started)}

    def close(self) -> None:
        self.broker.close()
        self.store.close()


def measure(instruments: int = 268, window: int = 256, updates: int = 20,
            backend: str = "numpy", pace_s: float = 0.0) -> dict[str, Any]:
    """Stage timings of one cold and `updates` warm updates, in milliseconds. `pace_s`:
    each update starts at least that long after the last one started, as the daemon's
    bars come a bar apart (0: back to back, as the figures before it was added)."""
    if instruments < 1 or window < 32 or updates < 2:
        raise ValueError("bench stages needs instruments >= 1, window >= 32, updates >= 2")
    with tempfile.TemporaryDirectory(prefix="rt-bench-stages-") as tmp:
        rig = Rig(write_config(Path(tmp), instruments, window), Path(tmp) / "state", backend)
        try:
            rig.trader.resume()
            events = [_paced(rig, n, pace_s) for n in range(updates)]
            wal = rig.store.empty_wal()
            events.append(rig.update(updates))
            wal_bytes = wal.stat().st_size  # what the last update wrote, all of it
            tables = rig.store.table_bytes()
        finally:
            rig.close()
    return {**_figures(events, instruments, window, backend), "pace_s": pace_s,
            "storage": {**(_storage(tables, instruments, len(events)) or {}),
                        "wal_bytes_per_update": wal_bytes}}


def _paced(rig: Rig, n: int, pace_s: float) -> dict[str, Any]:
    """Update n, then the rest of its pace: the daemon's next bar comes no sooner. Added to
    test a reading that updates run back to back slow each other's stages on a device
    host (the last one's synced writes); on the H200 a 250 ms pace made no stage faster
    (docs/benchmarks.md, thirty-eighth session), so the default stays back to back."""
    started = time.monotonic()
    event = rig.update(n)
    time.sleep(max(0.0, pace_s - (time.monotonic() - started)))
    return event


def _storage(tables: dict[str, tuple[int, int]] | None, instruments: int,
             checkpoints: int) -> dict[str, float] | None:
    """What the updates cost the database: bytes per stored return (one per instrument and
    bar), per window record (one per instrument and checkpoint), per checkpoint row."""
    if tables is None:
        return None
    per = {name: (used / rows if rows else 0.0) for name, (used, rows) in tables.items()}
    return {"returns_bytes_per_bar": round(per["returns"], 1),
            "windows_bytes_per_instrument_checkpoint": round(per["windows"], 1),
            "checkpoint_row_bytes": round(per["checkpoints"], 1),
            "bytes_per_instrument_update": round(
                sum(used for used, _ in tables.values()) / (instruments * checkpoints), 1)}


def _figures(events: list[dict[str, Any]], instruments: int, window: int,
             backend: str) -> dict[str, Any]:
    cold, warm = events[0], events[1:]
    orders = [e["orders"] for e in warm]
    order_ms = sum(e["timings_ms"].get("orders", 0.0) for e in warm)
    return {
        "instruments": instruments,
        "window": window,
        "warm_updates": len(warm),
        "backend": backend,
        "model_spec": CHEAP_SPEC,
        "cold_ms": {s: cold["timings_ms"].get(s, 0.0) for s in STAGES},
        "warm_ms": {s: _summary([e["timings_ms"].get(s, 0.0) for e in warm]) for s in STAGES},
        # after each bar's update, outside it and its round (service/state/wal_backfill.py)
        "after_bar_ms": {"wal_backfill": _summary([e["backfill_ms"] for e in warm])},
        "warm_intents": {"total": sum(orders), "max": max(orders)},
        "orders_ms_per_intent": round(order_ms / sum(orders), 4) if sum(orders) else None,
        "machine": platform.processor() or platform.machine(),
        "host": platform.node(),
        "date": time.strftime("%Y-%m-%d"),
    }


def _summary(values: list[float]) -> dict[str, float]:
    arr = np.asarray(values, dtype=np.float64)
    return {"p50": round(float(np.median(arr)), 3),
            "p99": round(float(np.percentile(arr, 99)), 3),
            "max": round(float(arr.max()), 3)}
