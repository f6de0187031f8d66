"""The service's settings: one frozen, unknown-key-rejecting model per component.

Parsed once at start-up from `service.toml` (and the instruments file it names); nothing
deeper in the code reads files or the environment for configuration.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from service.config_values import AwareTime, ConfigPath, Frozen, Interval, parse_interval
from service.live_guard import refuse_live
from service.settings_ops import (
    HOUR_S,
    MAX_COUNT,
    AlertSettings,
    HttpEndpointSettings,
    LoggingSettings,
    SupervisionSettings,
)
from service.sharding import normalise_shard

# fullmatch, not match with `$`: `$` also matches before a final newline ("alpha\n").
ACCOUNT_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,15}")


class SyntheticMarketSettings(Frozen):
    """The synthetic market (service.market.synthetic), its one list of defaults: bars
    round the clock, without sessions, in regime segments of `segment_bars` bars, each
    turbulent with probability `p_turbulent`. Vols and drifts are per bar, of log returns."""

    seed: int = Field(default=7, ge=0, lt=2**63)
    start: AwareTime = datetime(2026, 1, 5, 14, 30, tzinfo=UTC)  # first bar's close time
    segment_bars: int = Field(default=120, ge=2, le=MAX_COUNT)
    p_turbulent: float = Field(default=0.35, gt=0.0, lt=1.0)
    calm_vol: float = Field(default=0.0008, gt=0.0, le=1.0)  # sd of a bar's log return
    turbulent_vol: float = Field(default=0.0025, gt=0.0, le=1.0)
    calm_drift: float = Field(default=1e-6, ge=-1.0, le=1.0)  # mean of a bar's log return
    turbulent_drift: float = Field(default=-3e-6, ge=-1.0, le=1.0)
    start_price: float = Field(default=100.0, gt=0.0, le=1e9)
    base_volume: float = Field(default=10_000.0, gt=0.0, le=1e9)  # a calm bar's typical volume


class CsvMarketSettings(Frozen):
    """The CSV replay (service.market.csv_replay): where the files are, and their layout."""

    directory: ConfigPath  # one SYMBOL.csv per symbol; relative to service.toml
    time_column: str = "time"
    open_column: str = "open"
    high_column: str = "high"
    low_column: str = "low"
    close_column: str = "close"
    volume_column: str = "volume"
    naive_is_utc: bool = False  # read date-times without an offset as UTC
    # Past this share of a file's rows going backwards in time, the file is refused.
    max_unsorted_fraction: float = Field(default=0.05, ge=0.0, le=1.0)

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.time_column, self.open_column, self.high_column, self.low_column,
                self.close_column, self.volume_column)


def _not_live(url: str | None) -> str | None:
    """Every form of a live host (case, trailing dot, userinfo, IDNA...): live_guard.py."""
    return refuse_live(url)


PaperUrl = Annotated[str | None, AfterValidator(_not_live)]


class HttpSettings(Frozen):
    """HTTP hygiene shared by every Alpaca call of one account."""

    timeout_s: float = Field(
        default=10.0, gt=0.0, le=HOUR_S, description="per request, connect and read"
    )
    read_attempts: int = Field(default=4, ge=1, le=10, description="reads only; never POST")
    backoff_s: float = Field(
        default=0.5, ge=0.0, le=HOUR_S, description="first retry wait, doubled, jittered"
    )
    max_backoff_s: float = Field(default=8.0, ge=0.0, le=HOUR_S)
    # Alpaca allows 200 a minute; only a url_override (a gateway with its own limit, or the
    # tests' local server) may go above 199.
    requests_per_minute: int = Field(default=180, ge=1, le=MAX_COUNT)


class AlpacaMarketSettings(Frozen):
    feed: Literal["iex", "sip"] = "iex"  # free plans cannot query recent SIP data
    poll_delay_s: float = Field(
        default=3.0, ge=0.0, le=HOUR_S, description="wait after a bar closes"
    )
    url_override: PaperUrl = None  # tests and self-hosted gateways only; logged at start
    replay_start: AwareTime | None = None  # clock.mode = "fast": replay history from here


class MarketSettings(Frozen):
    kind: Literal["synthetic", "csv", "alpaca"] = "synthetic"
    interval: Interval = "1m"
    synthetic: SyntheticMarketSettings = SyntheticMarketSettings()
    csv: CsvMarketSettings | None = None
    alpaca: AlpacaMarketSettings = AlpacaMarketSettings()

    @property
    def bar_interval(self) -> timedelta:
        return parse_interval(self.interval)

    @model_validator(mode="after")
    def _csv_needs_its_table(self) -> MarketSettings:
        if self.kind == "csv" and self.csv is None:
            raise ValueError("kind = 'csv' needs a [market.csv] table with `directory`")
        return self


class ClockSettings(Frozen):
    # paced: one bar per `pace_s` seconds of wall time; fast: as fast as possible;
    # wall: market time is wall time (live data, e.g. market kind "alpaca")
    mode: Literal["paced", "fast", "wall"] = "paced"
    pace_s: float = Field(default=2.0, gt=0.0, le=HOUR_S)


class SimBrokerSettings(Frozen):
    starting_cash: float = Field(default=100_000.0, gt=0.0, le=1e12)
    allow_short: bool = False


class AlpacaBrokerSettings(Frozen):
    url_override: PaperUrl = None  # tests and self-hosted gateways only; logged at start
    key_dir: ConfigPath | None = None  # holds ACCOUNT.toml key files (owner-only), beside the env
    trade_when_closed: bool = False  # send orders while the clock endpoint says closed
    submit_attempts: int = Field(default=3, ge=1, le=10, description="same id each time")
    http: HttpSettings = HttpSettings()

    @model_validator(mode="after")
    def _under_alpacas_limit(self) -> AlpacaBrokerSettings:
        if self.url_override is None and self.http.requests_per_minute >= 200:
            raise ValueError(f"http.requests_per_minute = {self.http.requests_per_minute}: "
                             "Alpaca allows 200 a minute per account; stay below it")
        return self


class BrokerSettings(Frozen):
    kind: Literal["sim", "alpaca"] = "sim"
    sim: SimBrokerSettings = SimBrokerSettings()
    alpaca: AlpacaBrokerSettings = AlpacaBrokerSettings()
    reconcile_every: int = Field(default=10, ge=1, le=MAX_COUNT,
                                 description="updates between position checks")


class ModelSettings(Frozen):
    states: int = Field(default=2, ge=2, le=4)
    window: int = Field(default=256, ge=32, le=10_000)
    chains: int = Field(default=4, ge=2, le=64)
    seed: int = Field(default=20261130, ge=0, lt=2**63)
    backend: Literal["numpy", "wgpu", "auto"] = "numpy"
    shared_device: bool = Field(default=False, description="one process's GPU runs every "
                                "account's warm updates, joined (gpu_backend/device_server.py)")
    sample_between_bars: bool | Literal["auto"] = Field(
        default=True, description="each update's sampler after its commit, the bar reweighing "
        "its draws (between_bars.py); auto, an earlier default, is now the same as true")
    between_bars_margin: float = Field(default=1.0, gt=0.0, le=1.0, description="between bars "
        "the sampler runs on to this share of the gate's errors (regime_model/spec.py: why)")
    at_risk_margin: float = Field(default=0.6, gt=0.0, le=1.0, description="between bars "
        "an instrument at risk of the next bar's gate runs on to this share or less; 1: never")
    extend_max: int = Field(default=2, ge=0, le=8, description="blocks an instrument that "
        "fails the convergence gate, or whose window has two readings, may run on in its update")
    extension_chains: int = Field(default=32, ge=2, le=256, description="chains of a block")
    mcse_max: float = Field(default=0.02, gt=0.0, le=1.0,
                            description="the gate: the Monte Carlo error of P(turbulent)")
    # The sampler's effort per update. The defaults are what the convergence gate and the
    # regime-change figures (docs/benchmarks.md) were measured with; less effort gives
    # noisier estimates that fail the gate more often (and are then not traded on).
    draws: int = Field(default=40, ge=4, le=10_000,
                       description="kept draws per chain per update")
    warmup_cold: int = Field(default=300, ge=1, le=100_000,
                             description="warm-up iterations of an instrument with no carry")
    warmup_warm: int = Field(default=15, ge=0, le=10_000,
                             description="step-size re-adaptation iterations per warm update")
    shift_moves: bool = Field(
        default=True,
        description="a move between a window's two readings at a regime change "
        "(regime_model/level_shift.py) before every sampler iteration",
    )


class StrategySettings(Frozen):
    target_vol: float = Field(
        default=0.10, gt=0.0, le=10.0, description="annualised target volatility"
    )
    max_weight: float = Field(default=1.0, gt=0.0, le=1.0)
    enter_below: float = Field(default=0.35, ge=0.0, le=1.0)
    exit_above: float = Field(default=0.65, ge=0.0, le=1.0)
    min_trade_fraction: float = Field(default=0.02, ge=0.0, lt=1.0)
    # An unconverged estimate is not traded on: the previous target is scaled by this
    # (halving by default at each such bar; 0 goes flat, 1 keeps the stale target).
    unconverged_exposure: float = Field(default=0.5, ge=0.0, le=1.0)
    # Up to one-second bars around the clock (31.6 million a year).
    bars_per_year: float = Field(default=252 * 390, gt=0.0, le=1e8)

    @field_validator("exit_above")
    @classmethod
    def _hysteresis(cls, exit_above: float, info: ValidationInfo) -> float:
        enter = info.data.get("enter_below")
        if enter is not None and exit_above <= enter:
            raise ValueError(
                f"exit_above ({exit_above}) must exceed enter_below ({enter}) for hysteresis"
            )
        return exit_above


class RotationSettings(Frozen):
    batch_size: int = Field(
        default=0, ge=0, le=MAX_COUNT, description="0: the whole rotation every update"
    )
    # What happens to the position of an instrument removed from the rotation: "close"
    # sells it at the next update; "keep" leaves it with the broker, untouched.
    on_removal: Literal["close", "keep"] = "close"


class ReloadSettings(Frozen):
    """Live reload of the instruments file (the settings need a restart)."""

    # A change is applied once the file has been quiet this long, so a writer that
    # pauses mid-file (half now, the rest a moment later) is never applied half-written.
    quiet_ms: int = Field(default=400, ge=50, le=10_000)
    debounce_ms: int = Field(default=1600, ge=50, le=60_000)  # at most this long grouped
    poll_s: float = Field(default=5.0, gt=0.0, le=HOUR_S)  # the hash check behind the watcher
    watch: bool = True  # False: only the hash check and SIGHUP reload
    force_polling: bool = False  # network filesystems, and where inotify is missing


class AccountSettings(Frozen):
    name: str

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if not ACCOUNT_NAME_RE.fullmatch(name):
            raise ValueError(
                f"account name {name!r} must start with a letter and use at most 16 of "
                "[A-Za-z0-9_-] (it becomes part of every client_order_id)"
            )
        return name


class ServiceSettings(Frozen):
    accounts: tuple[AccountSettings, ...] = Field(min_length=1, max_length=1000, strict=False)
    instruments_file: ConfigPath = Path("instruments.toml")
    state_dir: ConfigPath | None = None
    # "I/N": only the accounts of shard I of N (docs/scaling.md); `run --shard` wins.
    shard: Annotated[str, AfterValidator(normalise_shard)] | None = None
    market: MarketSettings = MarketSettings()
    clock: ClockSettings = ClockSettings()
    broker: BrokerSettings = BrokerSettings()
    model: ModelSettings = ModelSettings()
    strategy: StrategySettings = StrategySettings()
    rotation: RotationSettings = RotationSettings()
    reload: ReloadSettings = ReloadSettings()
    logging: LoggingSettings = LoggingSettings()
    supervision: SupervisionSettings = SupervisionSettings()
    http: HttpEndpointSettings = HttpEndpointSettings()
    alerts: AlertSettings = AlertSettings()

    @field_validator("accounts")
    @classmethod
    def _unique_accounts(cls, accounts: tuple[AccountSettings, ...]) -> tuple[AccountSettings, ...]:
        names = [a.name for a in accounts]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"account names must be unique; repeated: {', '.join(duplicates)}")
        return accounts

    @property
    def account_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.accounts)

    @property
    def uses_alpaca(self) -> bool:
        return "alpaca" in (self.broker.kind, self.market.kind)

    @model_validator(mode="after")
    def _alpaca_market_needs_live_or_replay(self) -> ServiceSettings:
        if self.market.kind != "alpaca":
            return self
        if self.clock.mode == "paced":
            raise ValueError(
                "market kind 'alpaca' needs clock.mode = 'wall' (live) or 'fast' (replay)"
            )
        if self.clock.mode == "fast" and self.market.alpaca.replay_start is None:
            raise ValueError("clock.mode = 'fast' with market kind 'alpaca' needs "
                             "market.alpaca.replay_start, where the replay begins")
        return self
