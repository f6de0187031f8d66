"""Configuration: the shipped default is valid; every bad input is refused with the file,
the key and what to do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from regime_model.spec import ModelSpec
from service import config_files
from service.config_files import default_config_path
from service.config_loader import MAX_CONFIG_BYTES, ConfigError, load_config
from service.exit_codes import EX_CONFIG
from service.worker.update_inputs import model_spec

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


def problems(path: Path | None) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    return [str(p) for p in caught.value.problems]


def test_the_shipped_default_is_valid_with_two_accounts_of_eight_instruments() -> None:
    config = load_config()
    assert config.settings_path == default_config_path().resolve()
    assert config.settings_path.parent.name == "defaults"  # inside the package, not config/
    assert config.settings.account_names == ("alpha", "beta")
    assert all(len(config.instruments.symbols(a)) == 8 for a in ("alpha", "beta"))
    assert config.settings.broker.kind == "sim" and config.settings.market.kind == "synthetic"


def test_an_embedded_default_inside_a_zip_asks_for_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "service.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("service/defaults/service.toml", SETTINGS)
    monkeypatch.setattr(config_files, "files", lambda _: zipfile.Path(archive, "service/"))
    [message] = problems(None)
    assert "--config" in message and "not a file on disk" in message


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


# -- issue 12: whatever a file holds, a clear refusal (exit 78 naming the file and key) --

REPO = Path(__file__).resolve().parents[2]


def check_config(path: Path, command: str = "check-config") -> subprocess.CompletedProcess[str]:
    """`regime-trader check-config` as a real process; a hang fails at the deadline."""
    return subprocess.run(
        [sys.executable, "-m", "service.cli", command, "--config", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def assert_refused(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == EX_CONFIG, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


NESTINGS = [
    "symbols = " + "[" * 900 + "]" * 900,
    "symbols = " + "[" * 100_000,
    "symbols = [" + "{a = " * 900 + "1" + "}" * 900 + "]",
    "symbols = [" + "[1, " * 40 + "]" * 40 + "]",  # below the recursion limit, still absurd
]


@pytest.mark.parametrize("nested", NESTINGS, ids=["arrays-900", "open-100k", "tables", "40"])
def test_a_deeply_nested_instruments_file_is_refused(tmp_path: Path, nested: str) -> None:
    [message] = problems(write_config(tmp_path, instruments=f"[accounts.alpha]\n{nested}\n"))
    assert "instruments.toml" in message and "nested" in message


@pytest.mark.parametrize("command", ["check-config", "run"])
def test_a_deeply_nested_file_exits_78_naming_the_file(tmp_path: Path, command: str) -> None:
    path = write_config(tmp_path, settings=SETTINGS + "x = " + "[" * 900 + "]" * 900 + "\n")
    assert_refused(check_config(path, command), "service.toml", "nested")
    write_config(tmp_path, instruments=f"[accounts.alpha]\n{NESTINGS[0]}\n")
    assert_refused(check_config(path, command), "instruments.toml", "nested")


def special_files(tmp_path: Path) -> dict[str, Path]:
    """Everything that is not a regular file under the size cap, by name."""
    tmp_path.mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    huge = tmp_path / "huge.toml"
    with huge.open("wb") as handle:
        handle.truncate(MAX_CONFIG_BYTES * 256)  # sparse: no disk used
    links = {"link-to-fifo": "fifo", "dangling": "nowhere", "loop": "loop"}
    for name, target in links.items():
        (tmp_path / name).symlink_to(target)
    names = ["fifo", "folder", "huge.toml", *links]
    return {n: tmp_path / n for n in names} | {"device": Path("/dev/zero")}


def test_an_instruments_path_that_is_not_a_regular_file_is_refused_without_blocking(
    tmp_path: Path,
) -> None:
    for name, special in special_files(tmp_path / "special").items():
        path = write_config(tmp_path, settings=f"instruments_file = {str(special)!r}\n" + SETTINGS)
        assert_refused(check_config(path), special.name)
        [message] = problems(path)
        assert special.name in message and "cannot read it" in message, (name, message)


def test_a_service_toml_that_is_not_a_regular_file_is_refused_without_blocking(
    tmp_path: Path,
) -> None:
    write_config(tmp_path)
    for special in special_files(tmp_path / "special").values():
        assert_refused(check_config(special), special.name, "cannot read it")


def test_a_huge_interval_exits_78_naming_the_field(tmp_path: Path) -> None:
    path = write_config(tmp_path, settings=SETTINGS + '[market]\ninterval = "99999999999999d"\n')
    assert_refused(check_config(path), "market.interval")


BIG = "9" * 400
BAD_VALUES = [  # (table, key, TOML value): each a 78 naming table.key
    *[("market", "interval", v) for v in ['"99999999999999d"', '"8d"', '"-1m"', '"0s"',
                                          '"1m\\n"', '" 1m"', '"\\u0661m"', "60", '"1.5m"']],
    *[("clock", "pace_s", v) for v in ["inf", "nan", "-inf", "+inf", "1e308", BIG, '"2"',
                                       "true", "-1.0", "[1.0]", "1979-05-27"]],
    *[("supervision", "heartbeat_s", v) for v in ["inf", "nan", "1e9"]],
    ("supervision", "missed_heartbeats", BIG),
    ("supervision", "restart_intensity", "1e3"),
    ("broker.sim", "starting_cash", "inf"),
    ("broker.sim", "allow_short", "1"),
    ("strategy", "bars_per_year", "nan"),
    ("strategy", "bars_per_year", "1e300"),
    ("market.synthetic", "seed", "-1"),
    ("market.synthetic", "seed", BIG),
    ("market.synthetic", "start", "9999-12-31T23:59:59-05:00"),
    ("market.synthetic", "start", "0001-01-01T00:00:00+05:00"),
    ("market.synthetic", "start_price", "1e300"),
    ("market.alpaca", "replay_start", '"9999-12-31T23:59:59-23:59"'),
    ("model", "window", BIG),
    ("rotation", "batch_size", "-1"),
    ("reload", "poll_s", "inf"),
    ("broker.alpaca.http", "timeout_s", "nan"),
]


@pytest.mark.parametrize(("table", "key", "value"), BAD_VALUES)
def test_every_bad_value_is_refused_naming_the_field(
    tmp_path: Path, table: str, key: str, value: str
) -> None:
    messages = problems(write_config(tmp_path, settings=f"{SETTINGS}[{table}]\n{key} = {value}\n"))
    assert any(f"{table}.{key}" in m for m in messages), messages


@pytest.mark.parametrize("key", ["instruments_file", "state_dir"])
@pytest.mark.parametrize("value", ['"a\\u0000b"', f'"{"x" * 5000}"', "42"])
def test_a_bad_path_is_refused_naming_the_field(tmp_path: Path, key: str, value: str) -> None:
    messages = problems(write_config(tmp_path, settings=f"{key} = {value}\n{SETTINGS}"))
    assert any(key in m for m in messages), messages


@pytest.mark.parametrize("name", ["alpha\n", "alpha\r\n", "\nalpha", "alpha ", "alph\u00e4"])
def test_an_account_name_with_a_trailing_newline_or_stray_character_is_refused(
    tmp_path: Path, name: str
) -> None:
    settings = f"[[accounts]]\nname = {name!r}\n".replace("'", '"')
    messages = problems(write_config(tmp_path, settings=json_strings(settings)))
    assert any("accounts.0.name" in m for m in messages), messages


@pytest.mark.parametrize("symbol", ["IWM\n", "IWM\r\n", "\nIWM", "IWM ", "IWM\u200b", "\uff29WM"])
def test_a_symbol_with_a_trailing_newline_or_stray_character_is_refused(
    tmp_path: Path, symbol: str
) -> None:
    instruments = f"[accounts.alpha]\nsymbols = [{json.dumps(symbol)}]\n"
    [message] = problems(write_config(tmp_path, instruments=instruments))
    assert "accounts.alpha.symbols" in message and "malformed symbol" in message


def json_strings(text: str) -> str:
    """Python's repr escapes are TOML's, except that TOML has no \\x escapes."""
    return text.replace("\\x", "\\u00")


def test_the_cap_on_extra_model_blocks_defaults_to_two_and_is_bounded(tmp_path: Path) -> None:
    assert load_config(write_config(tmp_path)).settings.model.extend_max == 2
    path = write_config(tmp_path, SETTINGS + "\n[model]\nextend_max = 9\n")
    assert any("extend_max" in p for p in problems(path))


def test_the_sampler_effort_defaults_to_the_model_spec_s_and_reaches_the_update(
    tmp_path: Path,
) -> None:
    """draws, warmup_cold, warmup_warm, shift_moves, extension_chains and mcse_max left out
    are ModelSpec's defaults (what the
    convergence gate was measured with); set, they are the spec every update runs."""
    assert model_spec(load_config(write_config(tmp_path)).settings.model) == ModelSpec()
    path = write_config(tmp_path, SETTINGS + "\n[model]\ndraws = 80\nwarmup_cold = 50\n"
                        "warmup_warm = 0\nshift_moves = false\nextension_chains = 64\n"
                        "mcse_max = 0.03\n")
    spec = model_spec(load_config(path).settings.model)
    assert (spec.draws, spec.warmup_cold, spec.warmup_warm) == (80, 50, 0)
    assert spec.shift_moves is False
    assert (spec.extension_chains, spec.mcse_max) == (64, 0.03)
    too_few = write_config(tmp_path, SETTINGS + "\n[model]\ndraws = 3\n")
    assert any("draws" in p for p in problems(too_few)), "R-hat needs 4 draws a chain"
