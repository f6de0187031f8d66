"""`regime-trader show-config`: every default filled in, the text is TOML that reads back
as the same settings, `--json` is one JSON document, and nothing secret gets out."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from service.cli import main
from service.commands.show_config import MASK, mask
from service.config_loader import load_config

INSTRUMENTS = '[accounts.alpha]\nsymbols = ["SPY"]\n'


def _show(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["show-config", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _without_none(value: Any) -> Any:
    """TOML has no null: an unset setting is a comment in the text."""
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    return [_without_none(v) for v in value] if isinstance(value, list) else value


def test_json_is_one_document_with_every_default(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _show(capsys, "--json")
    assert code == 0 and len(out.strip().splitlines()) == 1
    shown = json.loads(out)
    loaded = load_config()
    assert shown["config_hash"] == loaded.config_hash
    assert shown["settings"]["supervision"]["heartbeat_s"] == 1.0  # not in the file: a default
    assert shown["settings"] == loaded.settings.model_dump(mode="json")
    assert shown["instruments"]["accounts"]["alpha"]["symbols"][0] == "SPY"
    assert set(shown) >= {"settings_file", "instruments_file", "state_dir"}


def test_the_text_is_toml_that_reads_back_as_the_same_configuration(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, text, _ = _show(capsys)
    _, json_out, _ = _show(capsys, "--json")
    shown = json.loads(json_out)
    settings, instruments = text.split("# ---- instruments ----")
    assert code == 0 and f"# config_hash: {shown['config_hash']}" in settings
    assert tomllib.loads(settings) == _without_none(shown["settings"])
    assert tomllib.loads(instruments) == shown["instruments"]


def test_credentials_in_a_url_are_masked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "instruments.toml").write_text(INSTRUMENTS)
    url = "https://trader:hunter2hunter2@paper.example.test:8443/v2?token=abcdef123456&x=1"
    (tmp_path / "service.toml").write_text(
        '[[accounts]]\nname = "alpha"\n[market.alpaca]\n'
        f'url_override = "{url}"\n'
    )
    code, out, _ = _show(capsys, "--config", str(tmp_path / "service.toml"), "--json")
    assert code == 0
    assert "hunter2" not in out and "trader:" not in out and "abcdef123456" not in out
    shown = json.loads(out)["settings"]["market"]["alpaca"]["url_override"]
    assert shown == f"https://{MASK}@paper.example.test:8443/v2?token=%5BMASKED%5D&x=1"


def test_secret_names_and_webhook_paths_are_masked() -> None:
    settings = {"alerts": {"webhook": "https://hooks.example.test/services/T0/B0/XYZSECRET",
                           "timeout_s": 5.0},
                "api_key": "abc", "client_secret": 12345, "token_file": None,
                "key_dir": "/etc/keys", "listen": "127.0.0.1:8080"}  # fmt: skip
    assert mask(settings) == {
        "alerts": {"webhook": f"https://hooks.example.test/{MASK}", "timeout_s": 5.0},
        "api_key": MASK, "client_secret": MASK, "token_file": None,
        "key_dir": "/etc/keys", "listen": "127.0.0.1:8080",
    }  # fmt: skip


def test_an_invalid_configuration_exits_78_naming_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "instruments.toml").write_text(INSTRUMENTS)
    (tmp_path / "service.toml").write_text('[[accounts]]\nname = "alpha"\n[model]\nstates = 9\n')
    code, out, err = _show(capsys, "--config", str(tmp_path / "service.toml"), "--json")
    assert (code, out) == (78, "")
    assert "model.states" in err
