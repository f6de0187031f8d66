"""One account's update cycle: bars -> regime model -> targets -> checkpoint -> orders.

The checkpoint is committed before any order is sent; on start the trader resumes from the
newest checkpoint and resolves every intent whose fate it does not know, by its
client_order_id, before it trades again.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from datetime import datetime

import numpy as np
import structlog

from gpu_backend.device_client import device_turn
from regime_model.backend import Backend
from regime_model.update import Diagnosis, RegimeEstimate, refresh_then_diagnose
from service.broker.base import Broker
from service.config_loader import LoadedConfig
from service.control.trading_mode import TradingMode
from service.market.bar_checks import CheckedFeed
from service.market.base import MarketFeed
from service.model_state import ModelState, take_new_bars
from service.state.carry_stacks import CarriesAhead
from service.state.checkpoint_codec import (
    POSITIONS_KEY,
    WARMING_KEY,
    book_carries,
    checkpoint_state,
    encode_model_state,
    positions_entry,
)
from service.state.store import Checkpoint, DecisionColumns, StateStore
from service.types import BrokerSnapshot, OrderIntent, Symbol
from service.worker.between_bars import BetweenBars, between_bars_on
from service.worker.cold_warmup import ColdWarmup, adopt, reset_unfit_carries, same_kind, split_cold
from service.worker.fault_points import FaultPoints
from service.worker.order_submission import OrderSubmitter
from service.worker.reconcile import Reconciler
from service.worker.rotation import next_batch
from service.worker.targets import RegimeChanges, Unconverged, decide_targets, log_unconverged
from service.worker.update_inputs import STAMP_KEY, inputs_of, model_spec
from service.worker.update_report import StageTimer, UpdateReport, log_update
from service.worker.warmup import Warmup

log = structlog.get_logger("service.worker")


class BarCursor:
    """The market time of the bar in hand. The simulated broker reads it as its `now`, so
    fills and submissions are stamped with market time, the same on every replay."""

    def __init__(self, value: datetime) -> None:
        self.value = value

    def __call__(self) -> datetime:
        return self.value


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
        warmup_backend: Callable[[], Backend] | None = None,
    ) -> None:
        self.account, self.config, self.broker, self.store = account, config, broker, store
        self.market = CheckedFeed.around(market)  # every bar the trader takes is checked
        self.backend, self.latest_bar, self.cursor = backend, latest_bar, cursor
        settings = config.settings
        self.spec = model_spec(settings.model)
        self.update_stamp: dict[str, object] = {}  # the last update's inputs (update_inputs)
        self.model_state = ModelState(instruments={})
        self.seq = 0
        self.last_bar_time: datetime | None = None
        self.reconciler = Reconciler(broker, store)
        self.faults = faults or FaultPoints()  # test-only crash points; none in production
        self.stop_requested: Callable[[], bool] = lambda: False  # the worker's stop flag
        self.warmup = Warmup(settings.model.window)
        # cold instruments warm up here, off the update's critical path (cold_warmup.py)
        self.cold = ColdWarmup(self.spec, settings.model.seed,
                               warmup_backend or same_kind(backend), self.faults)
        self.added_live: set[Symbol] = set()  # for model.warming's reason
        self.control = TradingMode(account)  # pause, resume, flatten (service/control/)
        between = between_bars_on(settings.model.sample_between_bars)
        self.between = BetweenBars(self.spec, backend) if between else None  # after the commit
        self.carries_ahead = CarriesAhead()  # its carries, written after the sampler

    @property
    def symbols(self) -> tuple[Symbol, ...]:
        entry = self.config.instruments.accounts.get(self.account)
        return entry.symbols if entry else ()

    @property
    def retired(self) -> bool:
        """The account has left the instruments file and every position is closed."""
        return not self.symbols and not self.model_state.retiring()

    def apply_config(self, config: LoadedConfig) -> None:
        """A new instruments file, taken between two updates."""
        self.config = config
        self.faults.hit("reload")  # test-only: a crash while a new configuration is taken
        added, removed = self._sync_rotation()
        self.added_live.update(added)
        log.info("instruments.applied", added=added, removed=removed,
                 config_hash=config.config_hash, after_seq=self.seq)

    def _sync_rotation(self) -> tuple[list[Symbol], list[Symbol]]:
        on_removal = self.config.settings.rotation.on_removal
        return self.model_state.sync_rotation(self.symbols, on_removal)

    # -- start-up ----------------------------------------------------------------------

    def resume(self) -> int:
        """Load the newest checkpoint (if any), settle every open intent, then reconcile
        with the broker (cancel stale open orders, adopt its positions)."""
        checkpoint = self.store.latest()
        if checkpoint is not None:
            self.model_state = checkpoint_state(self.store, checkpoint)
            # carries written under another [model] width warm up again (the model's spec
            # is fixed for the worker's life, so resuming is the one place they can appear)
            reset_unfit_carries(self.model_state, list(self.model_state.instruments), self.spec)
            if self.between is not None:  # its window sampled again before the next bar
                self.between.resume(checkpoint, self.model_state, self.config.settings.model.seed)
            self.seq, self.last_bar_time = checkpoint.seq, checkpoint.bar_time
            self.cursor.value = checkpoint.bar_time
        self._sync_rotation()  # the file may have changed while we were down
        self._orders().resolve_open_intents(self.control.sends_unseen)
        self.reconciler.at_start(self.symbols, self.account, self.seq)
        return self.seq

    def close(self) -> None:
        """No cold warm-up starts after this; one in flight is abandoned at exit."""
        self.cold.close()

    def _orders(self) -> OrderSubmitter:
        # Built per use, so the broker and stop flag in force now are the ones it uses.
        return OrderSubmitter(self.broker, self.store, self.faults, self.stop_requested)

    # -- one update --------------------------------------------------------------------

    def update(self, bar_time: datetime) -> UpdateReport | None:
        """One update at `bar_time`; None when the batch has no new bar (market closed,
        a weekend in daily data): nothing to learn, so no checkpoint and no orders."""
        timer, seq = StageTimer(), self.seq + 1
        self.cursor.value = bar_time
        self.sample_between_bars()  # a window left unsampled (a restart), first
        for done in self.cold.take_done():  # between updates, never mid-update
            adopt(done, self.model_state, seq)
        with timer.stage("reconcile"):
            self._orders().resolve_open_intents(self.control.sends_unseen)
        batch, next_start = next_batch(
            self.symbols, self.model_state.rotation_start, self.config.settings.rotation.batch_size
        )
        with timer.stage("fetch"):
            fresh = take_new_bars(self.model_state, self.market, batch, bar_time,
                                  self.spec.window)  # fmt: skip
        if not fresh and not self.model_state.retiring():
            # move on, or a slice without data would stall the rotation
            self.model_state.rotation_start = next_start
            log.debug("update.skipped", bar_time=bar_time.isoformat(), reason="no new bars",
                      bars_rejected=self.market.take_rejected())
            return None
        instruments = self.model_state.instruments
        ready = [s for s in batch if instruments[s].returns.size >= self.spec.window]
        self.warmup.note(self.model_state, batch)
        ready = self._hand_off_cold(ready, seq)
        with timer.stage("model"), device_turn(self.backend, bar_time.timestamp()):
            estimate, info, diagnosis = self._refresh(ready, seq)
        with diagnosis or nullcontext():  # its threads stop however the update ends
            with timer.stage("strategy"):
                snapshot = self.broker.snapshot()
                if seq % self.config.settings.broker.reconcile_every == 0:
                    self.reconciler.adopt_positions(snapshot)
                decided, intents, failed, changes = self._decide(ready, estimate, snapshot, seq)
                if intents and not self.broker.market_open():
                    log.info("orders.held", count=len(intents), reason="market closed")
                    intents = []
            self.model_state.rotation_start = next_start
            self.faults.hit("before_checkpoint")  # test-only crash points: none in production
            with timer.stage("checkpoint"):
                self._checkpoint(seq, bar_time, snapshot, decided, intents)
            if intents:
                self.faults.hit("after_checkpoint")  # committed, before any POST
            try:
                with timer.stage("orders"):
                    self._orders().send_all(intents, seq)
            finally:  # committed: the lines are the update's, whatever the orders do
                changes.log()
            self.seq, self.last_bar_time = seq, bar_time
            if diagnosis is not None:  # the wait is the model's `diagnostics` part
                info["diagnostics"] = log_unconverged(failed, diagnosis)
        log_update(self.market, self.backend, self.latest_bar, self.config.config_hash, seq,
                   bar_time, batch, ready, fresh, estimate, info, intents, timer)
        return UpdateReport(seq, bar_time, len(intents))

    def sample_between_bars(self, waited_s: float = 0.0) -> None:
        """[model] sample_between_bars: the last update's sampler, its carries kept for the
        next checkpoint (between_bars.py), at its turn after the update (sampler_turn.py)."""
        instruments = self.model_state.instruments
        sampled = self.between.sample_after(instruments, waited_s) if self.between else []
        if sampled:  # test-only fault point: the sampler ran, its chains not yet kept
            self.faults.hit("model")
        for symbol, carry in sampled:
            instruments[symbol].carry = carry
        if sampled:  # written now, off the next bar's checkpoint (carry_stacks.CarriesAhead)
            self.carries_ahead.prepare(book_carries(self.model_state), self.seq + 1,
                                       self.store.stage_carries)

    def _hand_off_cold(self, ready: list[Symbol], seq: int) -> list[Symbol]:
        """What this update models: the warm instruments (all, on a cold start); the cold
        ones warm up in the runner meanwhile, untraded, their positions held."""
        warm, cold = split_cold(self.model_state, ready, self.cold.pending())
        if cold:
            instruments = self.model_state.instruments
            self.cold.hand_off(cold, np.stack([instruments[s].returns for s in cold]), seq)
            self.warmup.note_model_warming(self.model_state, cold, self.added_live)
            self.added_live.difference_update(cold)
        return warm

    def _refresh(
        self, ready: list[Symbol], seq: int
    ) -> tuple[RegimeEstimate | None, dict[str, float], Diagnosis | None]:
        inputs = inputs_of(self.model_state, ready, seq, self.config.settings.model.seed)
        self.update_stamp = {**inputs.stamp(), "between_bars": self.between is not None}
        if self.between is not None:
            self.update_stamp["samples"] = self.between.sources(ready)
        if not ready:
            return None, {}, None
        if self.between is not None:  # the sampler ran between bars: the bar reweighs
            return self.between.estimate(inputs)
        states = [self.model_state.instruments[s] for s in ready]
        # Only a failing estimate's diagnostics are read (model.unconverged), and only after
        # the commit and the orders: the update waits for neither them nor the rest.
        estimate, carries, info, diagnosis = refresh_then_diagnose(
            inputs.returns, inputs.carries, inputs.keys, seq, inputs.seed, self.spec,
            self.backend, diagnose="failing")  # fmt: skip
        try:
            self.faults.hit("model")  # test-only: mid model update, new chain states not kept
        except BaseException:
            diagnosis.close()
            raise
        for state, carry in zip(states, carries, strict=True):
            state.carry = carry
        model = {"gradient_evals": float(info.gradient_evals), "extended": float(info.extended)}
        return estimate, {**model, **info.timings_ms}, diagnosis

    def _decide(
        self,
        ready: list[Symbol],
        estimate: RegimeEstimate | None,
        snapshot: BrokerSnapshot,
        seq: int,
    ) -> tuple[DecisionColumns, list[OrderIntent], Unconverged | None, RegimeChanges]:
        ids = self.store.ids_for(self.account)  # the database's epoch is in every id
        decided, intents, failed, changes = decide_targets(
            self.model_state, self.symbols, ready, estimate, snapshot, seq,
            self.config.settings.strategy, ids.tag)  # fmt: skip
        intents = self.control.orders(intents, snapshot, seq, ids.tag)  # paused: none
        return decided, intents, failed, changes

    def _checkpoint(
        self,
        seq: int,
        bar_time: datetime,
        snapshot: BrokerSnapshot,
        decided: DecisionColumns,
        intents: list[OrderIntent],
    ) -> None:
        model, book, windows, carries = encode_model_state(self.model_state, self.carries_ahead)
        # for `status`; resume ignores it
        book[WARMING_KEY] = self.warmup.book_entry(self.model_state, self.cold.pending())
        book[STAMP_KEY] = self.update_stamp  # for `replay`; resume ignores it
        book[POSITIONS_KEY] = positions_entry(snapshot)  # for `status`; resume ignores it
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
        self.store.commit_update(checkpoint, decided, intents,
                                 inside=lambda: self.faults.hit("in_commit"), windows=windows,
                                 carries=self.carries_ahead.to_write(carries, seq))
        self.model_state.saved()

