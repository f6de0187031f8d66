"""A worker's spec: what the supervisor hands a worker process at its start (pickled)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.config_loader import LoadedConfig


@dataclass(frozen=True)
class WorkerSpec:
    account: str
    config: LoadedConfig
    state_dir: Path
    stop_at_seq: int | None  # stop cleanly once this checkpoint exists (--stop-after)
    log_format: str = "json"  # decided once by the supervisor, which owns the terminal
    faults: tuple[str, ...] = ()  # test-only fault injection (see fault_points)
    # the shared device's (address, authkey) where `[model] shared_device` is on
    device: tuple[str, bytes] | None = None
