"""Build a worker's parts from its settings: market, clock, broker, state store, and the
batch shape its backend is picked for."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from gpu_backend import BatchShape
from service.broker.base import Broker
from service.broker.sim import SimBroker
from service.clock import Clock, FastClock, PacedClock, wall_clock
from service.config_loader import LoadedConfig, resolve_beside
from service.market.bar_checks import CheckedFeed
from service.market.base import MarketFeed
from service.market.csv_replay import CsvMarket
from service.market.synthetic import SyntheticMarket
from service.state.paths import sim_broker_path as sim_broker_path  # noqa: PLC0414 - re-
from service.state.paths import state_path as state_path  # noqa: PLC0414 - exported, mypy's way
from service.state.store import StateStore

if TYPE_CHECKING:
    from service.alpaca.client import AlpacaClient

log = structlog.get_logger("service.worker")
WALL_ANCHOR_KEY = "clock.wall_anchor"
_ALPACA_CLIENTS: dict[str, object] = {}  # per account: ONE client, so ONE request budget


def build_market(config: LoadedConfig, account: str | None = None) -> CheckedFeed:
    """The configured feed, passing on only bars within bar_checks' bounds: the trader and
    the simulated broker both read it, so neither sees an implausible price."""
    return CheckedFeed(_build_feed(config, account))


def _build_feed(config: LoadedConfig, account: str | None) -> MarketFeed:
    market = config.settings.market
    if market.kind == "alpaca":
        from service.alpaca.market import AlpacaMarket  # noqa: PLC0415 - alpaca-py on demand

        if account is None:
            raise ValueError("market kind 'alpaca' needs the account whose keys it uses")
        return AlpacaMarket(alpaca_client(config, account), market.bar_interval,
                            market.alpaca.feed)
    if market.kind == "synthetic":
        return SyntheticMarket(market.synthetic, market.bar_interval)
    csv = market.csv
    assert csv is not None  # the settings refuse kind = "csv" without [market.csv]
    directory = resolve_beside(config.settings_path, csv.directory)
    return CsvMarket(csv.model_copy(update={"directory": directory}), market.bar_interval)


def first_trading_bar(
    config: LoadedConfig, market: MarketFeed, symbols: tuple[str, ...]
) -> datetime:
    """The first bar with a full window of history behind it."""
    settings = config.settings
    if settings.market.kind == "alpaca" and settings.clock.mode == "wall":
        return live_clock(config, market).latest_bar()  # live: the history is back-filled
    start = market.first_bar_time(symbols) or settings.market.synthetic.start
    if settings.market.kind == "alpaca" and settings.market.alpaca.replay_start is not None:
        start = settings.market.alpaca.replay_start
    return start + (settings.model.window + 1) * market.bar_interval


def live_clock(config: LoadedConfig, market: MarketFeed) -> Clock:
    """Wall time, held back by the poll delay: a bar counts as closed `poll_delay_s` after
    its close, when Alpaca has published it."""
    delay = timedelta(seconds=config.settings.market.alpaca.poll_delay_s)
    return wall_clock(market.bar_interval, now=lambda: datetime.now(UTC) - delay)


def build_clock(
    config: LoadedConfig,
    market: MarketFeed,
    symbols: tuple[str, ...],
    first_bar: datetime,
    store: StateStore,
) -> Clock:
    clock = config.settings.clock
    if clock.mode == "wall":
        return live_clock(config, market)
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
    if config.settings.broker.kind == "alpaca":
        from service.alpaca.broker import AlpacaBroker  # noqa: PLC0415 - alpaca-py on demand

        alpaca = config.settings.broker.alpaca
        return AlpacaBroker(alpaca_client(config, account), alpaca.submit_attempts,
                            alpaca.trade_when_closed)
    sim = config.settings.broker.sim
    return SimBroker(
        sim_broker_path(state_dir, account),
        market,
        now,
        starting_cash=sim.starting_cash,
        allow_short=sim.allow_short,
    )


def alpaca_client(config: LoadedConfig, account: str) -> AlpacaClient:
    """The account's one Alpaca client (built on first use in this process): trading,
    market data and reconciliation share its timeouts and its request budget."""
    from service.alpaca.client import AlpacaClient, HttpPolicy  # noqa: PLC0415
    from service.alpaca.request_budget import RequestBudget  # noqa: PLC0415
    from service.secrets import load_keys  # noqa: PLC0415

    known = _ALPACA_CLIENTS.get(account)
    if isinstance(known, AlpacaClient):
        return known
    settings = config.settings
    broker, http = settings.broker.alpaca, settings.broker.alpaca.http
    trading_url, data_url = broker.url_override, settings.market.alpaca.url_override
    if trading_url or data_url:
        log.warning("alpaca.url_override", trading_url=trading_url, data_url=data_url,
                    reason="not Alpaca's own endpoints: tests or a self-hosted gateway")
    policy = HttpPolicy(http.timeout_s, http.read_attempts, http.backoff_s, http.max_backoff_s)
    budget = RequestBudget(http.requests_per_minute)
    client = AlpacaClient(load_keys(account, key_dir(config)), budget, policy,
                          trading_url=trading_url, data_url=data_url)
    _ALPACA_CLIENTS[account] = client
    return client


def key_dir(config: LoadedConfig) -> Path | None:
    """broker.alpaca.key_dir, relative to service.toml."""
    configured = config.settings.broker.alpaca.key_dir
    return None if configured is None else resolve_beside(config.settings_path, configured)


def batch_shape(config: LoadedConfig, account: str) -> BatchShape:
    """What one update of `account` computes, for `auto` to time both backends on."""
    model, rotation = config.settings.model, config.settings.rotation
    entry = config.instruments.accounts.get(account)
    instruments = len(entry.symbols) if entry else 1
    if rotation.batch_size:
        instruments = min(instruments, rotation.batch_size)
    return BatchShape(instruments * model.chains, model.window, model.states)
