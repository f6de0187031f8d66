"""Build a worker's parts from its settings: market, clock, broker, state store."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from service.broker.base import Broker
from service.broker.sim import SimBroker
from service.clock import Clock, FastClock, PacedClock
from service.config_loader import LoadedConfig, resolve_beside
from service.market.base import MarketFeed
from service.market.csv_replay import CsvMarket, CsvSettings
from service.market.synthetic import SyntheticMarket, SyntheticSettings
from service.state.store import StateStore

WALL_ANCHOR_KEY = "clock.wall_anchor"


def state_path(state_dir: Path, account: str) -> Path:
    return state_dir / f"{account}.sqlite"


def sim_broker_path(state_dir: Path, account: str) -> Path:
    return state_dir / f"{account}.sim-broker.sqlite"


def build_market(config: LoadedConfig) -> MarketFeed:
    market = config.settings.market
    if market.kind == "synthetic":
        s = market.synthetic
        return SyntheticMarket(
            SyntheticSettings(
                seed=s.seed,
                start=s.start,
                interval=market.bar_interval,
                segment_bars=s.segment_bars,
                p_turbulent=s.p_turbulent,
                calm_vol=s.calm_vol,
                turbulent_vol=s.turbulent_vol,
                start_price=s.start_price,
            )
        )
    csv = market.csv
    assert csv is not None  # the settings refuse kind = "csv" without [market.csv]
    return CsvMarket(
        CsvSettings(
            directory=resolve_beside(config.settings_path, csv.directory),
            interval=market.bar_interval,
            time_column=csv.time_column,
            open_column=csv.open_column,
            high_column=csv.high_column,
            low_column=csv.low_column,
            close_column=csv.close_column,
            volume_column=csv.volume_column,
            naive_is_utc=csv.naive_is_utc,
        )
    )


def first_trading_bar(
    config: LoadedConfig, market: MarketFeed, symbols: tuple[str, ...]
) -> datetime:
    """The first bar with a full window of history behind it."""
    settings = config.settings
    start = market.first_bar_time(symbols) or settings.market.synthetic.start
    return start + (settings.model.window + 1) * market.bar_interval


def build_clock(
    config: LoadedConfig,
    market: MarketFeed,
    symbols: tuple[str, ...],
    first_bar: datetime,
    store: StateStore,
) -> Clock:
    clock = config.settings.clock
    if clock.mode == "fast":
        return FastClock(market.bar_interval, end=market.last_bar_time(symbols))
    return PacedClock(
        market.bar_interval,
        clock.pace_s,
        market_anchor=first_bar,
        wall_anchor=_wall_anchor(store),
    )


def _wall_anchor(store: StateStore) -> datetime:
    """When this account's paced market time started: kept in the state database, so a
    restarted worker's market time carries on and it back-fills what it missed."""
    stored = store.meta(WALL_ANCHOR_KEY)
    if stored is not None:
        return datetime.fromisoformat(stored)
    anchor = datetime.now(UTC)
    store.set_meta(WALL_ANCHOR_KEY, anchor.isoformat())
    return anchor


def build_broker(
    config: LoadedConfig,
    account: str,
    state_dir: Path,
    market: MarketFeed,
    now: Callable[[], datetime],
) -> Broker:
    sim = config.settings.broker.sim
    return SimBroker(
        sim_broker_path(state_dir, account),
        market,
        now,
        starting_cash=sim.starting_cash,
        allow_short=sim.allow_short,
    )
