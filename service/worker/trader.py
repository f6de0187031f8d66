"""One account's update cycle: bars -> regime model -> targets -> checkpoint -> orders.

The checkpoint is committed before any order is sent; on start the trader resumes from the
newest checkpoint and resolves every intent whose fate it does not know, by its
client_order_id, before it trades again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import structlog

from gpu_backend.base import Backend
from regime_model.update import ModelSpec, RegimeEstimate, refresh
from service.broker.base import Broker
from service.config_loader import LoadedConfig
from service.market.bar_checks import CheckedFeed
from service.market.base import MarketFeed
from service.state.store import Checkpoint, DecisionRow, StateStore
from service.strategy import Decision, Signal, decide, order_intents
from service.types import BrokerSnapshot, OrderIntent, OrderOutcome, Symbol
from service.worker.book import Book, InstrumentState, decode_book, encode_book, instrument_key
from service.worker.fault_points import FaultPoints
from service.worker.reconcile import Reconciler
from service.worker.rotation import next_batch
from service.worker.warmup import BOOK_KEY, Warmup

log = structlog.get_logger("service.worker")


@dataclass(frozen=True)
class UpdateReport:
    seq: int
    bar_time: datetime
    orders: int


class BarCursor:
    """The market time of the bar in hand. The simulated broker reads it as its `now`, so
    fills and submissions are stamped with market time, the same on every replay."""

    def __init__(self, value: datetime) -> None:
        self.value = value

    def __call__(self) -> datetime:
        return self.value


class StageTimer:
    """Milliseconds per named stage of one update."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = round(self.ms.get(name, 0.0) + (time.perf_counter() - start) * 1e3, 3)


class Trader:
    def __init__(
        self,
        account: str,
        config: LoadedConfig,
        market: MarketFeed,
        broker: Broker,
        store: StateStore,
        backend: Backend,
        latest_bar: Callable[[], datetime],
        cursor: BarCursor,
        faults: FaultPoints | None = None,
    ) -> None:
        self.account = account
        self.config = config
        self.market = CheckedFeed.around(market)  # every bar the trader takes is checked
        self.broker = broker
        self.store = store
        self.backend = backend
        self.latest_bar = latest_bar
        self.cursor = cursor
        settings = config.settings
        self.spec = ModelSpec(
            n_states=settings.model.states,
            window=settings.model.window,
            chains=settings.model.chains,
        )
        self.book = Book(instruments={})
        self.seq = 0
        self.last_bar_time: datetime | None = None
        self.reconciler = Reconciler(broker, store)
        self.faults = faults or FaultPoints()  # test-only crash points; none in production
        self.stop_requested: Callable[[], bool] = lambda: False  # the worker's stop flag
        self.warmup = Warmup(settings.model.window)

    @property
    def symbols(self) -> tuple[Symbol, ...]:
        entry = self.config.instruments.accounts.get(self.account)
        return entry.symbols if entry else ()

    @property
    def retired(self) -> bool:
        """The account has left the instruments file and every position is closed."""
        return not self.symbols and not self.book.retiring()

    def apply_config(self, config: LoadedConfig) -> None:
        """A new instruments file, taken between two updates."""
        self.config = config
        self.faults.hit("reload")  # test-only: a crash while a new configuration is taken
        added, removed = self._sync_rotation()
        log.info("instruments.applied", added=added, removed=removed,
                 config_hash=config.config_hash, after_seq=self.seq)

    def _sync_rotation(self) -> tuple[list[Symbol], list[Symbol]]:
        return self.book.sync_rotation(self.symbols, self.config.settings.rotation.on_removal)

    # -- start-up ----------------------------------------------------------------------

    def resume(self) -> int:
        """Load the newest checkpoint (if any), settle every open intent, then reconcile
        with the broker (cancel stale open orders, adopt its positions)."""
        checkpoint = self.store.latest()
        if checkpoint is not None:
            self.book = decode_book(checkpoint.model, checkpoint.book)
            self.seq, self.last_bar_time = checkpoint.seq, checkpoint.bar_time
            self.cursor.value = checkpoint.bar_time
        self._sync_rotation()  # the file may have changed while we were down
        self.resolve_open_intents()
        self.reconciler.at_start(self.symbols, self.account, self.seq)
        return self.seq

    def resolve_open_intents(self) -> None:
        """Ask the broker about every intent not known to be final; send the ones it has
        never seen (same client_order_id, so a resend can never duplicate)."""
        for record in self.store.open_intents():
            if self.stop_requested():
                return  # stop means no new POST; the next start resolves the rest
            outcome = self.broker.lookup(record.intent.client_order_id)
            if outcome is None and record.status.needs_resolution:
                outcome = self._send(record.intent)
            elif outcome is not None and outcome.status != record.status:
                self._record(record.intent, outcome)

    # -- one update --------------------------------------------------------------------

    def update(self, bar_time: datetime) -> UpdateReport | None:
        """One update at `bar_time`; None when the batch has no new bar (market closed,
        a weekend in daily data): nothing to learn, so no checkpoint and no orders."""
        timer, seq = StageTimer(), self.seq + 1
        self.cursor.value = bar_time
        with timer.stage("reconcile"):
            self.resolve_open_intents()
        batch, cursor = next_batch(
            self.symbols, self.book.cursor, self.config.settings.rotation.batch_size
        )
        with timer.stage("fetch"):
            fresh = self._fetch(batch, bar_time)
        if not fresh and not self.book.retiring():
            self.book.cursor = cursor  # move on, or a slice without data would stall the rotation
            log.debug("update.skipped", bar_time=bar_time.isoformat(), reason="no new bars",
                      bars_rejected=self.market.take_rejected())
            return None
        ready = [s for s in batch if self.book.instruments[s].returns.size >= self.spec.window]
        self.warmup.note(self.book, batch)
        with timer.stage("model"):
            estimate, info = self._refresh(ready, seq)
        with timer.stage("strategy"):
            snapshot = self.broker.snapshot()
            if seq % self.config.settings.broker.reconcile_every == 0:
                self.reconciler.adopt_positions(snapshot)
            rows, intents = self._decide(ready, estimate, snapshot, seq)
            if intents and not self.broker.market_open():
                log.info("orders.held", count=len(intents), reason="market closed")
                intents = []
        self.book.cursor = cursor
        self.faults.hit("before_checkpoint")  # test-only crash points: none in production
        with timer.stage("checkpoint"):
            self._checkpoint(seq, bar_time, snapshot, rows, intents)
        if intents:
            self.faults.hit("after_checkpoint")  # committed, before any POST
        with timer.stage("orders"):
            self._send_all(intents, seq)
        self.seq, self.last_bar_time = seq, bar_time
        self._log_update(seq, bar_time, batch, ready, fresh, estimate, info, intents, timer)
        return UpdateReport(seq, bar_time, len(intents))

    def _send_all(self, intents: list[OrderIntent], seq: int) -> None:
        """POST the update's intents; once a stop is asked for, POST no more. The rest
        are durable in the checkpoint and sent, once, by `resolve_open_intents` at the next
        start (or the next update)."""
        for n, intent in enumerate(intents):
            self.faults.hit("before_post")
            if self.stop_requested():
                log.info("orders.deferred", count=len(intents) - n, reason="stop requested",
                         next="sent at the next start, by client_order_id")
                return
            self._send(intent, seq)

    def _fetch(self, batch: tuple[Symbol, ...], bar_time: datetime) -> int:
        """New bars for the batch: everything since each symbol's last bar, or a full
        window of history for a symbol seen for the first time."""
        window = self.spec.window
        cold = [s for s in batch if self.book.instruments[s].last_bar_time is None]
        warm = {s: self.book.instruments[s].last_bar_time for s in batch if s not in cold}
        bars = self.market.history(cold, bar_time, window + 1) if cold else {}
        if warm:
            bars.update(self.market.bars_after({s: t for s, t in warm.items() if t}, bar_time))
        return sum(self.book.instruments[s].append(bars.get(s, []), window) for s in batch)

    def _refresh(
        self, ready: list[Symbol], seq: int
    ) -> tuple[RegimeEstimate | None, dict[str, float]]:
        if not ready:
            return None, {}
        states = [self.book.instruments[s] for s in ready]
        estimate, carries, info = refresh(
            returns=np.stack([s.returns for s in states]),
            carries=[s.carry for s in states],
            instrument_keys=np.array([instrument_key(s.symbol) for s in states], dtype=np.uint32),
            seq=seq,
            seed=self.config.settings.model.seed,
            spec=self.spec,
            backend=self.backend,
        )
        self.faults.hit("model")  # test-only: mid model update, new chain states not kept
        for state, carry in zip(states, carries, strict=True):
            state.carry = carry
        return estimate, {"gradient_evals": float(info.gradient_evals), **info.timings_ms}

    def _decide(
        self,
        ready: list[Symbol],
        estimate: RegimeEstimate | None,
        snapshot: BrokerSnapshot,
        seq: int,
    ) -> tuple[list[DecisionRow], list[OrderIntent]]:
        """Targets for the modelled instruments, and flat targets for those leaving the
        rotation until the broker shows them flat."""
        budget = snapshot.equity / max(1, len(self.symbols))
        decisions, rows = self._model_decisions(ready, estimate, budget)
        retired = self.book.drop_flat(snapshot)
        if retired:
            log.info("instruments.retired", symbols=retired, reason="flat after removal")
        decisions += [Decision(s, False, 0.0, 0.0) for s in self.book.retiring()]
        prices = {d.symbol: float(self.book.instruments[d.symbol].last_close or 0.0)
                  for d in decisions}
        strategy = self.config.settings.strategy
        ids = self.store.ids_for(self.account)  # the database's epoch is in every id
        intents = order_intents(decisions, snapshot, prices, budget, ids.tag, seq, strategy)
        return rows, intents

    def _model_decisions(
        self, ready: list[Symbol], estimate: RegimeEstimate | None, budget: float
    ) -> tuple[list[Decision], list[DecisionRow]]:
        if estimate is None:
            return [], []
        decisions, rows = [], []
        for i, symbol in enumerate(ready):
            state = self.book.instruments[symbol]
            signal = _signal(symbol, estimate, i, state)
            decision = decide(signal, state.decision, budget, self.config.settings.strategy)
            self._note_regime(state, estimate, i)
            state.decision = decision
            decisions.append(decision)
            rows.append(_decision_row(signal, decision, estimate, i))
        return decisions, rows

    def _note_regime(self, state: InstrumentState, estimate: RegimeEstimate, i: int) -> None:
        regime = int(np.argmax(estimate.regime_probs[i]))
        if state.regime is not None and regime != state.regime:
            log.info(
                "regime.changed",
                symbol=state.symbol,
                **{"from": state.regime},
                to=regime,
                probability=round(float(estimate.regime_probs[i, regime]), 4),
            )
        state.regime = regime

    def _checkpoint(
        self,
        seq: int,
        bar_time: datetime,
        snapshot: BrokerSnapshot,
        rows: list[DecisionRow],
        intents: list[OrderIntent],
    ) -> None:
        model, book = encode_book(self.book)
        book[BOOK_KEY] = self.warmup.book_entry(self.book)  # for `status`; resume ignores it
        checkpoint = Checkpoint(
            seq=seq,
            bar_time=bar_time,
            config_hash=self.config.config_hash,
            backend=self.backend.name,
            adapter=self.backend.adapter,
            numerics=self.backend.numerics,
            cash=snapshot.cash,
            equity=snapshot.equity,
            model=model,
            book=book,
        )
        self.store.commit_update(checkpoint, rows, intents,
                                 inside=lambda: self.faults.hit("in_commit"))

    def _send(self, intent: OrderIntent, seq: int | None = None) -> OrderOutcome:
        log.info(
            "order.submitted",
            symbol=intent.symbol,
            client_order_id=intent.client_order_id,
            side=intent.side.value,
            qty=intent.qty,
            status="pending",
        )
        outcome = self.broker.submit(intent)
        self.faults.hit("after_post" if seq is not None else "after_resend")
        self._record(intent, outcome)
        return outcome

    def _record(self, intent: OrderIntent, outcome: OrderOutcome) -> None:
        self.store.record_outcome(outcome)
        log.info(
            "order.resolved",
            symbol=intent.symbol,
            client_order_id=intent.client_order_id,
            side=intent.side.value,
            qty=intent.qty,
            status=outcome.status.value,
            filled_qty=outcome.filled_qty,
            reason=outcome.reason,
        )

    def _log_update(
        self,
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
        interval = self.market.bar_interval
        behind = _bars_between(bar_time, self.latest_bar(), interval)
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
            bars_rejected=self.market.take_rejected(),
            new_bars=fresh,
            backend=self.backend.name,
            adapter=self.backend.adapter,
            numerics=self.backend.numerics,
            duration_ms=round(sum(timer.ms.values()), 3),
            timings_ms=timer.ms,
            model=info,
            orders=len(intents),
            divergences=int(estimate.divergences.sum()) if estimate is not None else 0,
            unconverged=unconverged,
            behind_bars=behind,
            config_hash=self.config.config_hash,
        )


def _signal(symbol: Symbol, estimate: RegimeEstimate, i: int, state: InstrumentState) -> Signal:
    return Signal(
        symbol=symbol,
        p_turbulent=float(estimate.regime_probs[i, -1]),
        pred_vol=float(estimate.pred_vol[i]),
        price=float(state.last_close or 0.0),
        converged=bool(estimate.converged[i]),
    )


def _decision_row(
    signal: Signal, decision: Decision, estimate: RegimeEstimate, i: int
) -> DecisionRow:
    return DecisionRow(
        symbol=signal.symbol,
        regime=int(np.argmax(estimate.regime_probs[i])),
        p_turbulent=signal.p_turbulent,
        pred_mean=float(estimate.pred_mean[i]),
        pred_vol=signal.pred_vol,
        converged=signal.converged,
        target_weight=decision.target_weight,
        target_qty=decision.target_qty,
    )


def _bars_between(earlier: datetime, later: datetime, interval: timedelta) -> int:
    return max(0, int((later - earlier) / interval))
