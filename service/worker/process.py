"""The worker process: one per account, started with the `spawn` method.

It sets up its own logging, backend, market, broker and state (nothing crosses the spawn
but the validated configuration), then trades bar after bar until told to stop. SIGTERM or
SIGINT lets the update in hand finish and checkpoint; the end of the pipe from the
supervisor (it died) means the same.
"""

from __future__ import annotations

import faulthandler
import os
import queue
import signal
import sys
import threading
import time
from datetime import datetime
from multiprocessing.connection import Connection
from types import FrameType
from typing import Any

import structlog

from gpu_backend import select_backend
from gpu_backend.device_client import SharedDeviceBackend
from service.broker.base import BrokerError
from service.clock import Clock
from service.control.trading_mode import TradingMode
from service.event_tap import listen
from service.exit_codes import EX_CONFIG, EX_SOFTWARE, EX_TEMPFAIL
from service.logs import configure_logging
from service.market.base import MarketDataError, UnusableDataError
from service.state.store import StateStore, StateUnavailableError, UnusableStateError
from service.worker import assembly
from service.worker.broker_start import resume_when_reachable
from service.worker.deferred_gc import deferred_collection
from service.worker.fault_points import FaultPoints
from service.worker.heartbeat import Heartbeat
from service.worker.sampler_turn import AfterBarStep, BarTurns
from service.worker.spec import WorkerSpec
from service.worker.trader import BarCursor, Trader
from service.worker.warmup import warn_if_data_ends_early

log = structlog.get_logger("service.worker")
Inbox = queue.SimpleQueue[tuple[str, Any]]


def worker_main(spec: WorkerSpec, conn: Connection, stdout: Connection, stderr: Connection) -> None:
    """Entry point in the child process: its output goes into the supervisor's pipes."""
    os.dup2(stdout.fileno(), 1)
    os.dup2(stderr.fileno(), 2)
    faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    logging_settings = spec.config.settings.logging
    configure_logging(logging_settings.level, spec.log_format, account=spec.account)
    listen(Heartbeat(conn).forward)
    stop, inbox = threading.Event(), Inbox()
    _install_stop_handlers(stop)
    threading.Thread(target=_watch_parent, args=(conn, stop, inbox), daemon=True).start()
    _run_or_fail(spec, stop, conn, inbox)


def _run_or_fail(spec: WorkerSpec, stop: threading.Event, conn: Connection, inbox: Inbox) -> None:
    """What run_worker_or_refuse does not classify is a bug or an unforeseen fault: one
    structured `worker.failed` event and exit 70, never a bare traceback and exit 1."""
    try:
        run_worker_or_refuse(spec, stop, conn, inbox)
    except Exception as error:  # the process boundary: say what it was, then exit 70
        log.error("worker.failed", error_type=type(error).__name__, error=str(error),
                  exit_code=EX_SOFTWARE, exc_info=True,
                  next="the supervisor restarts the worker with backoff; a bug if it repeats")
        sys.exit(EX_SOFTWARE)


def run_worker_or_refuse(
    spec: WorkerSpec, stop: threading.Event, conn: Connection | None = None,
    inbox: Inbox | None = None,
) -> None:
    """run_worker; a state database that cannot be trusted ends the process with 78, which
    the supervisor answers by parking the account (restarting cannot help); one that
    cannot be written for now (disk full, read-only, denied) with 75: restarted."""
    try:
        run_worker(spec, stop, conn, inbox)
    except UnusableStateError as error:
        log.error("state.unusable", reason=str(error), exit_code=EX_CONFIG,
                  next="the account is parked until the database is restored or moved aside")
        sys.exit(EX_CONFIG)
    except StateUnavailableError as error:  # disk full, read-only, denied: may pass
        log.error("state.unavailable", reason=str(error), errno=error.errno_name,
                  exit_code=EX_TEMPFAIL, next="the supervisor restarts the worker with backoff")
        sys.exit(EX_TEMPFAIL)
    except UnusableDataError as error:  # a bad data file: a person must fix it
        log.error("market.unusable", file=error.file, line=error.line, column=error.column,
                  reason=error.reason, exit_code=EX_CONFIG,
                  next="the account is parked until the file is fixed and the service restarted")
        sys.exit(EX_CONFIG)


def run_worker(
    spec: WorkerSpec, stop: threading.Event, conn: Connection | None = None,
    inbox: Inbox | None = None,
) -> int:
    """Build the parts, resume, trade until stopped; returns the last checkpoint's seq."""
    config, account = spec.config, spec.account
    backend = select_backend(config.settings.model.backend, assembly.batch_shape(config, account))
    if spec.device is not None and backend.name == "wgpu":  # warm runs on the shared device
        backend = SharedDeviceBackend(backend, *spec.device, account=account)
    market = assembly.build_market(config, account)
    symbols = config.instruments.symbols(account)
    first_bar = assembly.first_trading_bar(config, market, symbols)
    warn_if_data_ends_early(market, symbols, first_bar, config.settings.model.window)
    store = StateStore(assembly.state_path(spec.state_dir, account), account=account)
    cursor = BarCursor(first_bar - market.bar_interval)
    broker = assembly.build_broker(config, account, spec.state_dir, market, cursor)
    clock = assembly.build_clock(config, market, symbols, first_bar, store)
    faults, beat = FaultPoints(spec.faults, account), Heartbeat(conn)
    trader = Trader(account, config, market, broker, store, backend, clock.latest_bar, cursor,
                    faults)
    trader.control = TradingMode(account, spec.state_dir)
    trader.control.load()  # a pause or flatten outlives the worker: it is on file
    try:
        faults.hit("start")
        resumed = resume_when_reachable(  # refused keys exit 78 (broker_start.py)
            trader, stop, config.settings.supervision,
            lambda allowance_s: beat.send("beat", trader.seq, allowance_s))
        if resumed is None:
            log.info("worker.stopping", seq=trader.seq, reason="stop requested before start")
            return trader.seq
        log.info(
            "worker.started",
            backend=backend.name,
            adapter=backend.adapter,
            numerics=backend.numerics,
            resumed_from_seq=resumed,
            instruments=len(symbols),
        )
        beat.send("started", resumed, spec.config.settings.supervision.startup_budget_s)
        _trade(trader, clock, cursor, stop, spec, beat, faults, inbox or Inbox())
    finally:
        trader.close()
        done = getattr(backend, "expect_no_more_work", None)  # a GPU's planned clock wake
        if done is not None:
            done()
        broker.close()
        store.close()
    return trader.seq


def _trade(
    trader: Trader,
    clock: Clock,
    cursor: BarCursor,
    stop: threading.Event,
    spec: WorkerSpec,
    beat: Heartbeat,
    faults: FaultPoints,
    inbox: Inbox,
) -> None:
    """Bar after bar. The heartbeat comes from this loop, never from a side thread, so a
    blocked loop is a silent one."""
    supervision = spec.config.settings.supervision
    trader.stop_requested = stop.is_set  # no new order POST once a stop is asked for
    faults.watch_stop(stop)
    update_allowance = supervision.startup_budget_s  # the first update may be a cold one
    reason = "stop-after reached"
    turns = BarTurns(spec.state_dir)  # closed after the loop (by the process's exit if it raises)
    after_bar = AfterBarStep(trader, turns, clock, supervision,
                             lambda allowance_s: beat.send("beat", trader.seq, allowance_s))
    while not stop.is_set() and (spec.stop_at_seq is None or trader.seq < spec.stop_at_seq):
        _take_messages(trader, inbox)
        if trader.retired:
            reason = "account removed from the instruments file"
            beat.send("retired", trader.seq, supervision.heartbeat_s)  # revived if re-added
            break
        beat.send("beat", trader.seq, supervision.heartbeat_s)
        _expect_bar(trader, clock, cursor.value)
        bar_time = clock.wait_for_bar_after(cursor.value, stop, timeout=supervision.heartbeat_s)
        if bar_time is None:
            if stop.is_set() or clock.is_exhausted_after(cursor.value):
                reason = "stop requested" if stop.is_set() else "market data exhausted"
                break
            continue
        beat.send("beat", trader.seq, update_allowance)
        faults.hit("update")
        started = time.monotonic()
        with turns.bar(), deferred_collection():  # no collector pause inside an update
            updated = _update(trader, bar_time)
        if updated:
            beat.send("updated", trader.seq, supervision.heartbeat_s)
        update_allowance = max(supervision.update_budget_s, 10 * (time.monotonic() - started))
        if updated:
            after_bar.run(bar_time, stop)
    turns.close()
    if stop.is_set():
        reason = "stop requested"
    _let_warmup_finish(trader, beat, supervision.heartbeat_s, supervision.shutdown_budget_s / 2)
    # From here the process only tears down (the GPU device, the interpreter), silently:
    # give it the shutdown budget, not a heartbeat. 80 workers of one H200 host stopping
    # together took more than the heartbeat's slack to release their devices, were taken
    # for hung, and the supervisor counted the kills against its budget and exited 70.
    beat.send("beat", trader.seq, supervision.shutdown_budget_s)
    log.info("worker.stopping", seq=trader.seq, reason=reason)


def _expect_bar(trader: Trader, clock: Clock, after: datetime) -> None:
    """Tell a backend that can get ready (a GPU raising its clocks: gpu_backend/clock_wake.py)
    when the next bar's update is due; a fast clock's come at once and need no warning."""
    expect = getattr(trader.backend, "expect_work_in", None)
    seconds = clock.seconds_until_bar_after(after)
    if expect is not None and seconds is not None:
        expect(seconds)


def _let_warmup_finish(trader: Trader, beat: Heartbeat, beat_s: float, limit_s: float) -> None:
    """A cold warm-up in flight is not kept (a restart starts it again), but a device
    call cut off by the interpreter's exit could crash it: give it a bounded while, with
    the heartbeat flowing."""
    trader.close()
    deadline = time.monotonic() + limit_s
    while not trader.cold.wait_idle(min(beat_s, max(0.0, deadline - time.monotonic()))):
        if time.monotonic() >= deadline:
            log.warning("model.warmup_abandoned", symbols=sorted(trader.cold.pending()),
                        reason="stopping", next="it starts again after the restart")
            return
        beat.send("beat", trader.seq, beat_s)


def _update(trader: Trader, bar_time: datetime) -> bool:
    """One update; a broker or market outage (after the client's own retries) costs this
    update only: nothing was checkpointed, and the next bar catches up."""
    try:
        return trader.update(bar_time) is not None
    except UnusableDataError:
        raise  # not an outage: a bad file stays bad at the next bar (run_worker_or_refuse)
    except (BrokerError, MarketDataError) as error:
        log.warning("update.failed", bar_time=bar_time.isoformat(), reason=str(error),
                    next="retry at the next bar")
        return False


def _install_stop_handlers(stop: threading.Event) -> None:
    def record(signum: int, frame: FrameType | None) -> None:
        stop.set()  # only record: the loop finishes the update in hand, then exits

    signal.signal(signal.SIGTERM, record)
    signal.signal(signal.SIGINT, record)


def _watch_parent(conn: Connection, stop: threading.Event, inbox: Inbox) -> None:
    """Control messages from the supervisor, queued for the main loop, which acts on them
    between updates. The supervisor keeps its end open while it lives: EOF means it is
    gone."""
    try:
        while True:
            inbox.put(conn.recv())
    except (EOFError, OSError):
        pass  # the supervisor died or closed the pipe: treat it as a stop request
    stop.set()


def _take_messages(trader: Trader, inbox: Inbox) -> None:
    """Apply what the supervisor sent (a new configuration, a control request), never
    mid-update."""
    while not inbox.empty():
        kind, payload = inbox.get()
        if kind == "config":
            trader.apply_config(payload)
        elif kind == "control":  # pause, resume, flatten (service/control/)
            trader.control.apply(payload)
