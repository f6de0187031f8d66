"""Instruments not modelled yet: with less history than the model window (until they
have it), or with a cold warm-up in flight (service.worker.cold_warmup: `model.warming`
when handed off; the runner's `model.ready` when its carry is adopted).

Each is logged once when found short (`instrument.insufficient_history`, with the bars
it has, the bars it needs and what to do) and once when it has enough
(`instrument.warmed_up`); the checkpoint's book carries both kinds (WARMING_KEY of
service.state.checkpoint_codec, with their stage), where `status` reads them.
"""

from __future__ import annotations

import operator
from datetime import datetime
from typing import Any

import structlog

from service.market.base import MarketFeed
from service.model_state import InstrumentState, ModelState
from service.types import Symbol

log = structlog.get_logger("service.worker")
_LAST_CLOSE = operator.attrgetter("last_close")
_RETURNS = operator.attrgetter("returns")


def bars_available(state: InstrumentState) -> int:
    """Bars behind the instrument's return window (n returns come from n + 1 closes)."""
    return 0 if state.last_close is None else int(state.returns.size) + 1


def warn_if_data_ends_early(
    market: MarketFeed, symbols: tuple[Symbol, ...], first_bar: datetime, window: int
) -> None:
    """Replayed data that ends before the first full window means no update at all: say
    so per instrument at start, instead of only "market data exhausted"."""
    last = market.last_bar_time(symbols)
    if last is None or last >= first_bar:
        return
    warmup = Warmup(window)
    for symbol, bars in market.history(symbols, last, window + 1).items():
        warmup.log_short(symbol, len(bars))


class Warmup:
    def __init__(self, window: int) -> None:
        self.needed = window + 1  # a window of returns needs one bar more
        self._short: set[Symbol] = set()  # logged as short, not yet as warmed up

    def note(self, state: ModelState, batch: tuple[Symbol, ...]) -> None:
        """Log the batch's instruments that became short, or stopped being short."""
        for symbol in batch:
            available = bars_available(state.instruments[symbol])
            if available < self.needed and symbol not in self._short:
                self._short.add(symbol)
                self.log_short(symbol, available)
            elif available >= self.needed and symbol in self._short:
                self._short.discard(symbol)
                log.info("instrument.warmed_up", symbol=symbol, bars_available=available)

    def log_short(self, symbol: Symbol, available: int) -> None:
        log.warning(
            "instrument.insufficient_history", symbol=symbol, bars_available=available,
            bars_needed=self.needed, missing=self.needed - available,
            next=f"not modelled until {self.needed - available} more bars arrive; give "
            "it older data (or a smaller model.window) to model it sooner")

    def note_model_warming(
        self, state: ModelState, cold: list[Symbol], added_live: set[Symbol]
    ) -> None:
        """Once per hand-off to the cold warm-up runner (service.worker.cold_warmup)."""
        for symbol in cold:
            log.info("model.warming", symbol=symbol,
                     reason="added live" if symbol in added_live else "no checkpoint",
                     bars=bars_available(state.instruments[symbol]),
                     next="not traded until its warm-up is adopted (model.ready); the "
                     "account's other instruments keep their updates")

    def book_entry(self, state: ModelState, modelling: frozenset[Symbol]) -> dict[str, Any]:
        """The instruments not modelled yet, for the checkpoint (and `status`): short of
        history (stage "history"), or with a cold warm-up in flight (stage "model").
        None, most updates: that is found first with three passes in C over the
        instruments (an instrument at a time, 0.17 ms of the daemon's checkpoint at 268 an
        account on an H100 host, thirty-ninth session)."""
        instruments = state.instruments.values()
        if not modelling and None not in map(_LAST_CLOSE, instruments) \
                and min(map(len, map(_RETURNS, instruments)), default=0) + 1 >= self.needed:
            return {}  # every instrument has its window, none warms up
        entries: dict[str, Any] = {}
        for symbol, instrument in sorted(state.instruments.items()):
            available = bars_available(instrument)
            if instrument.retiring or (available >= self.needed and symbol not in modelling):
                continue
            stage = "history" if available < self.needed else "model"
            entries[symbol] = {"bars_available": available, "bars_needed": self.needed,
                               "stage": stage}
        return entries
