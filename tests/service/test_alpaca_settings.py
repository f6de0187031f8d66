"""Alpaca settings: paper only, a budget under Alpaca's limit, keys checked before start."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import DaemonProcess
from pydantic import ValidationError

from service.settings import AlpacaBrokerSettings, HttpSettings, ServiceSettings

ALPACA = """
[[accounts]]
name = "alpha"

[market]
kind = "alpaca"

[market.alpaca]
replay_start = "2026-01-05T14:30:00Z"

[clock]
mode = "fast"

[broker]
kind = "alpaca"

[logging]
format = "json"
"""


def test_the_live_endpoint_is_refused_and_says_why() -> None:
    with pytest.raises(ValidationError, match="LIVE trading endpoint"):
        AlpacaBrokerSettings(url_override="https://api.alpaca.markets")
    assert AlpacaBrokerSettings(url_override="https://paper-api.alpaca.markets").url_override


def test_only_a_url_override_may_lift_the_budget_to_alpacas_limit_or_above() -> None:
    with pytest.raises(ValidationError, match="Alpaca allows 200 a minute"):
        AlpacaBrokerSettings(http=HttpSettings(requests_per_minute=200))
    AlpacaBrokerSettings(url_override="http://127.0.0.1:9", http=HttpSettings(
        requests_per_minute=10_000))


def test_alpaca_market_data_needs_a_live_or_replay_clock() -> None:
    base = {"accounts": [{"name": "alpha"}], "market": {"kind": "alpaca"}}
    with pytest.raises(ValidationError, match=r"clock\.mode = 'wall'"):
        ServiceSettings.model_validate(base)
    with pytest.raises(ValidationError, match="replay_start"):
        ServiceSettings.model_validate({**base, "clock": {"mode": "fast"}})


def test_run_without_keys_exits_78_naming_the_variables(
    run_daemon: Callable[..., DaemonProcess], tmp_path: Path
) -> None:
    (tmp_path / "instruments.toml").write_text('[accounts.alpha]\nsymbols = ["SPY"]\n')
    (tmp_path / "service.toml").write_text(ALPACA)
    daemon = run_daemon("run", "--config", str(tmp_path / "service.toml"),
                        "--state-dir", str(tmp_path / "state"),
                        env={"REGIME_TRADER_ALPHA_KEY_ID": "", "REGIME_TRADER_ALPHA_SECRET": ""})
    assert daemon.wait_exit(timeout=60) == 78
    [rejected] = daemon.named("config.rejected")
    assert "REGIME_TRADER_ALPHA_KEY_ID" in rejected["errors"][0]
