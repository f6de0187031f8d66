"""What one update reports: its stage timings, its result, and the one `update.completed`
log event that says what it did and how far behind the market it is."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

import structlog

from gpu_backend.backend_traffic import take_traffic
from regime_model.backend import Backend
from regime_model.update import RegimeEstimate
from service.market.bar_checks import CheckedFeed
from service.types import OrderIntent, Symbol

log = structlog.get_logger("service.worker")


@dataclass(frozen=True)
class UpdateReport:
    seq: int
    bar_time: datetime
    orders: int


class StageTimer:
    """Milliseconds per named stage of one update, and wall times (epoch seconds) of its
    start and of each stage's end: `bench round` measures from a bar's release to them."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}
        self.started_at = time.time()
        self.ended_at: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = round(self.ms.get(name, 0.0) + (time.perf_counter() - start) * 1e3, 3)
            self.ended_at[name] = time.time()


def log_update(
    market: CheckedFeed,
    backend: Backend,
    latest_bar: Callable[[], datetime],
    config_hash: str,
    seq: int,
    bar_time: datetime,
    batch: tuple[Symbol, ...],
    ready: list[Symbol],
    fresh: int,
    estimate: RegimeEstimate | None,
    info: dict[str, float],
    intents: list[OrderIntent],
    timer: StageTimer,
) -> None:
    interval = market.bar_interval
    behind = _bars_between(bar_time, latest_bar(), interval)
    unconverged = [
        s for i, s in enumerate(ready) if estimate is not None and not estimate.converged[i]
    ]
    log.info(
        "update.completed",
        seq=seq,
        bar_time=bar_time.isoformat(),
        instruments=len(batch),
        modelled=len(ready),
        warming=sorted(set(batch) - set(ready)),
        bars_rejected=market.take_rejected(),
        new_bars=fresh,
        backend=backend.name,
        adapter=backend.adapter,
        numerics=backend.numerics,
        duration_ms=round(sum(timer.ms.values()), 3),
        timings_ms=timer.ms,
        started_at=round(timer.started_at, 6),
        committed_at=_wall(timer.ended_at.get("checkpoint")),
        device=take_traffic(backend)._asdict(),  # submissions and bytes uploaded: this update's
        model=info,
        orders=len(intents),
        divergences=int(estimate.divergences.sum()) if estimate is not None else 0,
        unconverged=unconverged,
        behind_bars=behind,
        config_hash=config_hash,
    )


def _wall(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 6)


def _bars_between(earlier: datetime, later: datetime, interval: timedelta) -> int:
    return max(0, int((later - earlier) / interval))
