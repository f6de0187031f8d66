"""Configuration: the shipped default is valid; every bad input is refused with the file,
the key and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.config_loader import DEFAULT_CONFIG, ConfigError, load_config

INSTRUMENTS = """
[accounts.alpha]
symbols = ["SPY", "QQQ"]
"""

SETTINGS = """
[[accounts]]
name = "alpha"
"""


def write_config(tmp_path: Path, settings: str = SETTINGS, instruments: str = INSTRUMENTS) -> Path:
    (tmp_path / "instruments.toml").write_text(instruments)
    path = tmp_path / "service.toml"
    path.write_text(settings)
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return [str(p) for p in caught.value.problems]


def test_the_shipped_default_is_valid_with_two_accounts_of_eight_instruments() -> None:
    config = load_config(DEFAULT_CONFIG)
    assert config.settings.account_names == ("alpha", "beta")
    assert all(len(config.instruments.symbols(a)) == 8 for a in ("alpha", "beta"))
    assert config.settings.broker.kind == "sim" and config.settings.market.kind == "synthetic"


def test_the_config_hash_is_stable_and_changes_with_the_instruments(tmp_path: Path) -> None:
    first = load_config(write_config(tmp_path)).config_hash
    assert load_config(write_config(tmp_path)).config_hash == first
    changed = INSTRUMENTS.replace('"QQQ"', '"IWM"')
    assert load_config(write_config(tmp_path, instruments=changed)).config_hash != first


def test_malformed_toml_names_the_file_and_the_line(tmp_path: Path) -> None:
    [message] = problems(write_config(tmp_path, settings="[[accounts]\nname = 'alpha'\n"))
    assert "service.toml" in message and "TOML syntax error" in message and "line 1" in message


def test_an_unknown_key_is_named_with_its_path(tmp_path: Path) -> None:
    [message] = problems(write_config(tmp_path, settings=SETTINGS + "[model]\nstatez = 3\n"))
    assert "model.statez" in message and "unknown key" in message


def test_a_duplicate_symbol_is_refused(tmp_path: Path) -> None:
    dup = INSTRUMENTS.replace('"QQQ"', '"SPY"')
    [message] = problems(write_config(tmp_path, instruments=dup))
    assert "instruments.toml" in message and "listed twice: SPY" in message


def test_a_malformed_symbol_is_refused(tmp_path: Path) -> None:
    [message] = problems(write_config(tmp_path, instruments=INSTRUMENTS.replace("QQQ", "qq q")))
    assert "malformed symbol" in message and "'qq q'" in message


def test_an_unknown_account_in_the_instruments_file_is_refused(tmp_path: Path) -> None:
    extra = INSTRUMENTS + '\n[accounts.gamma]\nsymbols = ["TLT"]\n'
    [message] = problems(write_config(tmp_path, instruments=extra))
    assert "accounts.gamma" in message and "unknown account" in message


def test_an_account_without_instruments_is_idle(tmp_path: Path) -> None:
    settings = SETTINGS + '\n[[accounts]]\nname = "beta"\n'
    config = load_config(write_config(tmp_path, settings=settings))
    assert config.settings.account_names == ("alpha", "beta")
    assert config.active_accounts == ("alpha",)


def test_an_empty_or_missing_file_is_refused(tmp_path: Path) -> None:
    [empty] = problems(write_config(tmp_path, instruments=""))
    assert "empty" in empty
    [missing] = problems(tmp_path / "nope.toml")
    assert "cannot read" in missing


def test_hysteresis_needs_exit_above_enter(tmp_path: Path) -> None:
    bad = SETTINGS + "[strategy]\nenter_below = 0.6\nexit_above = 0.5\n"
    [message] = problems(write_config(tmp_path, settings=bad))
    assert "strategy.exit_above" in message and "hysteresis" in message
