"""One account's object in the status document: its worker's state, its last update, its
money (from the last reconciliation, or from the broker with --live) and positions.

The account's `state`, one word:

| state          | meaning                                                          | health |
|----------------|------------------------------------------------------------------|--------|
| `running`      | its worker trades                                                | ok     |
| `warming_up`   | its worker runs, no instrument is modelled yet                   | ok     |
| `paused`       | the operator paused it (service control)                         | ok     |
| `starting`     | its worker is starting (or about to)                             | ok     |
| `hung`         | silent past its deadline: being killed                           | down   |
| `restarting`   | its worker died; restarted after a backoff                       | down   |
| `parked`       | past its restart budget, or it refused to start (78): `reason`   | down   |
| `stopped`      | its worker finished (--stop-after), the daemon runs on            | down   |
| `not_running`  | the daemon is not running (`last_state`: what it was)            | down   |
| `unknown`      | the daemon is unresponsive or unreadable                         | down   |
| `retired`      | no instruments in the file, but state: not traded by choice      | retired|
| `idle`         | no instruments, never any state                                  | idle   |

`health` is `unreadable` whatever the state when its database cannot be read.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from service.state.paths import state_path
from service.state.status_reads import (
    SNAPSHOT_ERRORS,
    Holding,
    SchemaVersionError,
    Snapshot,
    TargetPosition,
    read_snapshot,
)
from service.status.pnl import pnl, position_unrealised, trading_day_start, unrealised

HEALTHY_STATES = frozenset({"running", "warming_up", "paused", "starting"})


@dataclass(frozen=True)
class BrokerView:
    """Cash, equity, positions and open orders, and where they come from: the update's
    snapshot in the checkpoint ("checkpoint") or the broker asked now ("broker")."""

    source: str
    cash: float
    equity: float
    holdings: tuple[Holding, ...] | None
    open_orders: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class AccountRead:
    database: Path
    snapshot: Snapshot | None
    error: str | None = None
    written_at: float | None = None  # the database's (or its WAL's) last write, epoch s
    exists: bool = True


def read_account(state_dir: Path, account: str) -> AccountRead:
    database = state_path(state_dir, account)
    try:
        if not database.exists():  # raises, rather than answers False, when not permitted
            return AccountRead(database, None, exists=False)
        written = _written_at(database)  # before opening: a reader must not look like a write
        return AccountRead(database, read_snapshot(database, trading_day_start), None, written)
    except SNAPSHOT_ERRORS as error:
        return AccountRead(database, None, _explain(database, error))


def checkpoint_view(snapshot: Snapshot) -> BrokerView:
    orders = tuple({"client_order_id": o.client_order_id, "seq": o.seq, "symbol": o.symbol,
                    "side": o.side, "qty": o.qty, "status": o.status,
                    "filled_qty": o.filled_qty} for o in snapshot.open_orders)
    return BrokerView("checkpoint", snapshot.cash, snapshot.equity, snapshot.positions, orders)


def account_object(
    name: str, read: AccountRead, now: datetime, daemon_state: str,
    worker: dict[str, Any] | None, active: bool, view: BrokerView | None,
    live_error: str | None = None,
) -> dict[str, Any]:
    s, w = read.snapshot, worker or {}
    state = account_state(daemon_state, worker, active, read)
    return {
        "account": name,
        "state": state,
        "health": health_of(state, read.error),
        "paused": bool(w.get("paused")),
        "last_state": w.get("state"),
        "reason": w.get("reason"),  # set while parked
        "cause": w.get("worker_error"),
        "worker_pid": w.get("worker_pid"),
        "restarts": w.get("restarts"),
        "last_error": w.get("last_error"),
        "error": read.error,
        "database": str(read.database),
        "last_update": None if s is None else _last_update(s, read, w, now),
        "source": None if view is None else view.source,
        "live_error": live_error,
        **_money(s, view),
    }


def account_state(
    daemon_state: str, worker: dict[str, Any] | None, active: bool, read: AccountRead
) -> str:
    if not active:  # out of the instruments file: not traded, by the operator's choice
        return "retired" if read.exists else "idle"
    if daemon_state in ("running", "stopping"):
        return _worker_state(worker, read)
    return {"starting": "starting", "unresponsive": "unknown",
            "unknown": "unknown"}.get(daemon_state, "not_running")


def _worker_state(worker: dict[str, Any] | None, read: AccountRead) -> str:
    raw = "starting" if worker is None else str(worker.get("state"))
    if raw == "retired":  # back in the file a moment ago: its new worker is on its way
        return "starting"
    if raw != "running":
        return raw
    if worker is not None and worker.get("paused"):
        return "paused"
    s = read.snapshot  # warming up: instruments warm, none with a decision yet
    if s is not None and s.warming and all(t.target_qty is None for t in s.targets):
        return "warming_up"
    return "running"


def health_of(state: str, error: str | None) -> str:
    if error is not None:
        return "unreadable"
    if state in ("retired", "idle"):
        return state
    return "ok" if state in HEALTHY_STATES else "down"


def _last_update(
    s: Snapshot, read: AccountRead, worker: dict[str, Any], now: datetime
) -> dict[str, Any]:
    """When it completed: the supervisor saw it (runtime), else the database's last write."""
    seen = worker.get("last_update") or {}
    at = seen.get("at") if seen.get("seq") == s.seq else None
    moment = _parse(at) if at else None
    if moment is None and read.written_at is not None:
        moment = datetime.fromtimestamp(read.written_at, now.tzinfo)
    return {
        "seq": s.seq,
        "bar_time": s.bar_time.isoformat(),
        "at": None if moment is None else moment.isoformat(),
        "age_s": None if moment is None else round(max(0.0, (now - moment).total_seconds()), 3),
        "duration_ms": seen.get("duration_ms") if at else None,
        "orders": seen.get("orders") if at else None,
        "config_hash": s.config_hash,
        "backend": f"{s.backend}/{s.adapter}/{s.numerics}",
    }


def _money(s: Snapshot | None, view: BrokerView | None) -> dict[str, Any]:
    if view is None:
        return {"equity": None, "cash": None, "pnl": None, "positions": [], "open_orders": [],
                "warming": []}
    targets, warming = (s.targets, s.warming) if s is not None else ((), ())
    closes = {t.symbol: t.last_close for t in targets}
    u_now = None if view.holdings is None else unrealised(view.holdings, closes)
    return {
        "equity": view.equity,
        "cash": view.cash,
        "pnl": None if s is None else pnl(view.equity, u_now, s.first, s.day_base, s.bar_time),
        "positions": _positions(targets, {w.symbol for w in warming}, view.holdings, closes),
        "open_orders": list(view.open_orders),
        "warming": [{"symbol": w.symbol, "bars_available": w.bars_available,
                     "bars_needed": w.bars_needed, "stage": w.stage} for w in warming],
    }


def _positions(
    targets: tuple[TargetPosition, ...], warming: set[str], holdings: tuple[Holding, ...] | None,
    closes: dict[str, float | None],
) -> list[dict[str, Any]]:
    """One row per symbol held or in the rotation: held beside the target (held None where
    the checkpoint predates recording the broker's positions)."""
    held = {h.symbol: h for h in holdings or ()}
    wanted = {t.symbol: t for t in targets}
    rows = []
    for symbol in sorted(set(held) | set(wanted)):
        h, t = held.get(symbol), wanted.get(symbol)
        rows.append({
            "symbol": symbol,
            "held": None if holdings is None else (0.0 if h is None else h.qty),
            "target": None if t is None else t.target_qty,
            "last_close": closes.get(symbol),
            "avg_entry_price": None if h is None else h.avg_entry_price,
            "unrealised": None if h is None else _round(position_unrealised(h, closes.get(symbol))),
            "regime": None if t is None else t.regime,
            "p_turbulent": None if t is None else t.p_turbulent,
            "warming": symbol in warming,
        })
    return rows


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _parse(stamp: str) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp)
    except ValueError:
        return None


def _written_at(database: Path) -> float:
    """The last write to the database or its WAL. An empty WAL is ignored: a read-only open
    of a quiescent WAL database creates an empty -wal, which is no write."""
    stamps = [database.stat().st_mtime]
    wal = database.with_name(database.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        stamps.append(wal.stat().st_mtime)
    return max(stamps)


def _explain(database: Path, error: Exception) -> str:
    hint = "is it a regime-trader state database? Move it aside or restore it from a backup"
    if isinstance(error, PermissionError) or "unable to open" in str(error):
        hint = "run status as the service's user or root, or check the permissions"
    elif isinstance(error, SchemaVersionError):
        return f"{database}: {error}"  # the message already says what to do
    return f"{database}: {error}; {hint}"
