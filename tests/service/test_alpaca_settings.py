"""Alpaca settings: paper only, a budget under Alpaca's limit, keys checked before start."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import DaemonProcess
from pydantic import ValidationError

from service.cli import main
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


LIVE_FORMS = [
    "https://api.alpaca.markets./", "https://API.Alpaca.Markets", "https://api.alpaca.markets:443",
    "https://user:pw@api.alpaca.markets/", "https://paper-api.alpaca.markets@api.alpaca.markets",
    "  https://api.alpaca.markets  ", "HTTPS://api.alpaca.markets", "api.alpaca.markets",
    "//api.alpaca.markets", "http://api.alpaca.markets", "wss://api.alpaca.markets/stream",
    "https://api%2Ealpaca%2Emarkets", "https://%61pi.alpaca.markets", "https://api.alpaca.markets..",
    "https://\uff41\uff50\uff49.alpaca.markets", "https://api\u3002alpaca\uff0emarkets", "https://api\u00ad.alpaca.markets",
    "https://xn--api-.alpaca.markets", "https://api.alpaca.markets\\@paper-api.alpaca.markets",
    "https://broker-api.alpaca.markets", "https://v2.api.alpaca.markets", "https://[api.alpaca.markets]",
    "https:api.alpaca.markets", "https:/api.alpaca.markets", "https://api.alpaca.markets\t",
    "https://api.alpaca.markets%2F", "https://api.alpaca.markets#@127.0.0.1",
]


@pytest.mark.parametrize("url", LIVE_FORMS)
def test_every_form_of_the_live_host_is_refused(url: str) -> None:
    with pytest.raises(ValidationError, match="LIVE"):
        AlpacaBrokerSettings(url_override=url)


@pytest.mark.parametrize("url", ["https://paper-api.alpaca.markets", "http://127.0.0.1:8080",
                                 "https://PAPER-API.alpaca.markets./", "http://localhost:9/x",
                                 "https://data.alpaca.markets", "https://gateway.example.com"])
def test_paper_data_and_local_hosts_pass(url: str) -> None:
    assert AlpacaBrokerSettings(url_override=url).url_override == url


def test_check_config_with_keys_refuses_an_account_without_them_and_passes_with_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What rc.d's start check runs (deploy/freebsd/regime_trader): daemon(8) would
    restart a `run` that exits 78 for missing keys every 5 s, so the check looks first."""
    (tmp_path / "instruments.toml").write_text('[accounts.alpha]\nsymbols = ["SPY"]\n')
    config = tmp_path / "service.toml"
    config.write_text(ALPACA)
    for name in ("REGIME_TRADER_ALPHA_KEY_ID", "REGIME_TRADER_ALPHA_SECRET"):
        monkeypatch.delenv(name, raising=False)
    assert main(["check-config", "--config", str(config)]) == 0, "keys are not looked for"
    assert main(["check-config", "--keys", "--config", str(config)]) == 78
    assert "REGIME_TRADER_ALPHA_KEY_ID" in capsys.readouterr().err
    monkeypatch.setenv("REGIME_TRADER_ALPHA_KEY_ID", "PKTESTKEYID0000000000")
    monkeypatch.setenv("REGIME_TRADER_ALPHA_SECRET", "testsecret0000000000000000000000")
    assert main(["check-config", "--keys", "--config", str(config)]) == 0
