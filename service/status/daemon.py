"""Whether the daemon runs: who holds the state directory's lock, and how old the
supervisor's heartbeat (its runtime file, rewritten once a second) is.

| state          | lock            | runtime file                                   |
|----------------|-----------------|------------------------------------------------|
| `running`      | held            | the holder's, heartbeat under HEARTBEAT_FRESH_S |
| `stopping`     | held            | the holder's, fresh, saying it stops            |
| `starting`     | held            | none of the holder's yet, lock taken < 10 s ago |
| `unresponsive` | held            | heartbeat older (SIGSTOPped, hung, or no file)  |
| `stopped`      | free            | with `stopped_at`: it stopped cleanly           |
| `crashed`      | free            | without `stopped_at`: killed, or it crashed     |
| `never_ran`    | free            | none                                           |
| `unknown`      | cannot be read  | or cannot be read (permissions): `reason` says  |
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from service.state.paths import LOCK_NAME, lock_holder

HEARTBEAT_FRESH_S = 10.0  # ten missed writes of a once-a-second heartbeat
DaemonState = Literal["running", "stopping", "starting", "unresponsive", "stopped",
                      "crashed", "never_ran", "unknown"]


def daemon_status(state_dir: Path, now: datetime, runtime: dict[str, Any] | None) -> dict[str, Any]:
    """The `daemon` object of the status document."""
    try:
        holder = lock_holder(state_dir)
        locked_at = _lock_time(state_dir) if holder is not None else None
    except OSError as error:  # not permitted: say so, the accounts may still be readable
        return _shape("unknown", None, runtime, now, f"{state_dir / LOCK_NAME}: {error}")
    if holder is None:
        return _free(runtime, now)
    if runtime is None or runtime.get("pid") != holder:
        return _held_without_heartbeat(holder, runtime, now, locked_at)
    age = _age_s(runtime.get("heartbeat_at"), now)
    if age is None or age > HEARTBEAT_FRESH_S:
        return _shape("unresponsive", holder, runtime, now,
                      f"pid {holder} holds the state directory's lock but its heartbeat is "
                      f"{_seconds(age)} old: stopped (SIGSTOP) or hung?")
    stopping = bool(runtime.get("stopping") or runtime.get("stopped_at"))
    return _shape("stopping" if stopping else "running", holder, runtime, now, None)


def _free(runtime: dict[str, Any] | None, now: datetime) -> dict[str, Any]:
    if runtime is None:
        return _shape("never_ran", None, None, now, "no daemon has run on this state directory")
    pid = runtime.get("pid")
    if runtime.get("stopped_at"):
        return _shape("stopped", pid, runtime, now, None)
    return _shape("crashed", pid, runtime, now,
                  f"the daemon (pid {pid}) ended without a clean stop (killed, or it "
                  f"crashed); its last heartbeat was at {runtime.get('heartbeat_at')}")


def _held_without_heartbeat(
    holder: int, runtime: dict[str, Any] | None, now: datetime, locked_at: float | None
) -> dict[str, Any]:
    """The holder has not written its runtime file yet: starting, unless it took the lock
    long ago (then it is stuck, or a build that writes none)."""
    age = None if locked_at is None else max(0.0, now.timestamp() - locked_at)
    who = f"pid {holder}" if holder else "a process that wrote no pid yet"
    if age is not None and age <= HEARTBEAT_FRESH_S:
        return _shape("starting", holder or None, None, now,
                      f"{who} took the state directory's lock {_seconds(age)} ago")
    return _shape("unresponsive", holder or None, None, now,
                  f"{who} has held the state directory's lock for {_seconds(age)} without "
                  "writing a heartbeat")


def _shape(
    state: DaemonState, pid: Any, runtime: dict[str, Any] | None, now: datetime,
    reason: str | None,
) -> dict[str, Any]:
    doc = runtime or {}
    return {
        "state": state,
        "running": state in ("running", "stopping"),
        "pid": pid,
        "reason": reason,
        "heartbeat_at": doc.get("heartbeat_at"),
        "heartbeat_age_s": _age_s(doc.get("heartbeat_at"), now),
        "started_at": doc.get("started_at"),
        "stopped_at": doc.get("stopped_at"),
        "version": doc.get("version"),
        "config_hash": doc.get("config_hash"),
        "http": doc.get("http"),
        "shard": doc.get("shard"),
        "device": doc.get("device"),
    }


def _lock_time(state_dir: Path) -> float:
    """When the lock was taken: its holder writes its pid into the file then."""
    return (state_dir / LOCK_NAME).stat().st_mtime


def _age_s(stamp: Any, now: datetime) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return round(max(0.0, (now - datetime.fromisoformat(stamp)).total_seconds()), 3)
    except (ValueError, TypeError):  # malformed or naive: no age rather than a wrong one
        return None


def _seconds(age: float | None) -> str:
    return "unknown" if age is None else f"{age:.0f}s"
