"""The settings of running the service: logging, supervision, the operator's HTTP
endpoint and alerts (service.settings assembles them with the trading components')."""

from __future__ import annotations

import ipaddress
from typing import Literal

from pydantic import Field, field_validator, model_validator

from service.config_values import Frozen

# Upper bounds: far beyond any sane value, low enough that sums and products of settings
# (deadlines, timeouts, backoffs) stay finite and inside what time and select accept.
DAY_S = 86_400.0
HOUR_S = 3_600.0
MAX_COUNT = 1_000_000  # bars, updates, restarts: any count a setting holds


class LoggingSettings(Frozen):
    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["auto", "json", "console"] = "auto"


class SupervisionSettings(Frozen):
    """OTP-style supervision of the worker processes (one_for_one over accounts)."""

    shutdown_budget_s: float = Field(default=20.0, gt=0.0, le=HOUR_S)
    # Liveness: the worker's main loop reports every heartbeat_s; after
    # `missed_heartbeats` silent intervals past what it announced, it counts as hung.
    heartbeat_s: float = Field(default=1.0, gt=0.0, le=HOUR_S)
    missed_heartbeats: int = Field(default=4, ge=2, le=1000)
    startup_budget_s: float = Field(default=300.0, gt=0.0, le=DAY_S)  # start-up and cold warm-up
    update_budget_s: float = Field(default=120.0, gt=0.0, le=DAY_S)  # one warm update, at least
    # Per account: more than `restart_intensity` restarts within `restart_period_s` parks
    # the account for `park_cooldown_s`; each restart waits an exponential backoff.
    restart_intensity: int = Field(default=5, ge=1, le=MAX_COUNT)
    restart_period_s: float = Field(default=60.0, gt=0.0, le=DAY_S)
    backoff_initial_s: float = Field(default=0.5, ge=0.0, le=HOUR_S)
    backoff_max_s: float = Field(default=30.0, ge=0.0, le=DAY_S)
    park_cooldown_s: float = Field(default=300.0, ge=0.0, le=7 * DAY_S)
    # All accounts together: past this the supervisor exits 70 and lets the init system
    # restart the whole tree.
    global_intensity: int = Field(default=20, ge=1, le=MAX_COUNT)
    global_period_s: float = Field(default=300.0, gt=0.0, le=DAY_S)
    # One account, one host (service/worker/twin_guard.py): a worker does not start while
    # the broker holds an order of this account from another state database submitted
    # within this many seconds (0: not looked for). 300 s is five 1-minute bars: a twin
    # that traded at any of its last five bar closes is seen, and a database moved aside
    # on this host holds its account back for at most five minutes after its last order.
    twin_window_s: float = Field(default=300.0, ge=0.0, le=DAY_S)


class HttpEndpointSettings(Frozen):
    """[http]: the supervisor's read-only endpoint (/, /metrics, /healthz, /api/status).
    Off unless `listen` is set (or `run --http ADDR`); loopback unless allow_remote."""

    listen: str | None = None  # "127.0.0.1:9464", "[::1]:9464"
    allow_remote: bool = False  # a non-loopback address serves anyone who can reach it

    @field_validator("listen")
    @classmethod
    def _address(cls, listen: str | None) -> str | None:
        if listen is not None:
            parse_listen(listen)
        return listen

    @model_validator(mode="after")
    def _loopback_unless_allowed(self) -> HttpEndpointSettings:
        if self.listen is not None and not self.allow_remote:
            refuse_remote(self.listen)
        return self


def parse_listen(listen: str) -> tuple[str, int]:
    """"HOST:PORT" or "[V6]:PORT" as (host, port); ValueError says what is wrong."""
    host, sep, port = listen.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"listen = {listen!r}: expected HOST:PORT, e.g. 127.0.0.1:9464")
    return host, int(port)


def refuse_remote(listen: str) -> None:
    host, _ = parse_listen(listen)
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False  # a host name other than localhost may resolve anywhere
    if not loopback:
        raise ValueError(
            f"listen = {listen!r} is not a loopback address; the endpoint has no "
            "authentication, so set allow_remote = true to serve it beyond this host "
            "(behind a firewall or a reverse proxy with authentication)"
        )


class AlertSettings(Frozen):
    """[alerts]: a JSON POST to `webhook` when an account needs a person (see docs)."""

    webhook: str | None = None  # http:// or https:// URL; off when unset
    timeout_s: float = Field(default=5.0, gt=0.0, le=60.0)
    unconverged_streak: int = Field(default=5, ge=1, le=MAX_COUNT)  # updates in a row
    daily_at: str = "21:00"  # UTC time of the daily P&L message (HH:MM)

    @field_validator("webhook")
    @classmethod
    def _url(cls, webhook: str | None) -> str | None:
        if webhook is not None and not webhook.startswith(("http://", "https://")):
            raise ValueError(f"webhook = {webhook!r}: expected an http:// or https:// URL")
        return webhook

    @field_validator("daily_at")
    @classmethod
    def _hh_mm(cls, daily_at: str) -> str:
        hh, sep, mm = daily_at.partition(":")
        if not (sep and hh.isdigit() and mm.isdigit() and int(hh) < 24 and int(mm) < 60):
            raise ValueError(f"daily_at = {daily_at!r}: expected HH:MM (UTC), e.g. 21:00")
        return daily_at
