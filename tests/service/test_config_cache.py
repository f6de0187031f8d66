"""`status` answers from the summary of a configuration validated before, byte for byte,
without loading pydantic (service/config_cache.py); any other bytes are validated again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from service import config_cache
from service.bench.daemon_harness import write_config
from service.config_loader import load_config

SETTINGS = '[[accounts]]\nname = "alpha"\n\n[[accounts]]\nname = "beta"\n'
INSTRUMENTS = '[accounts.alpha]\nsymbols = ["SPY"]\n\n[accounts.beta]\nsymbols = ["AAPL"]\n'


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return write_config(tmp_path / "config", SETTINGS, INSTRUMENTS)


def status(config: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], bool]:
    """`status --json` in a fresh process with its own cache; and whether it loaded
    pydantic (Python's own import log says)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPROFILEIMPORTTIME": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "status", "--json", "--config", str(config),
         "--state-dir", str(tmp_path / "state")],
        capture_output=True, text=True, env=env, timeout=120, check=False)
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    return done, "pydantic" in imported


def accounts(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return [a["account"] for a in json.loads(done.stdout)["accounts"]]


def test_the_second_status_of_the_same_bytes_skips_validation_and_says_the_same(
    config: Path, tmp_path: Path
) -> None:
    first, validated = status(config, tmp_path)
    assert validated, "the first look validates"
    second, validated_again = status(config, tmp_path)
    assert not validated_again, "the same bytes, by the same code: the remembered verdict"
    assert json.loads(second.stdout)["config_hash"] == json.loads(first.stdout)["config_hash"]
    assert accounts(second) == accounts(first) == ["alpha", "beta"]


def test_what_check_config_and_run_validated_status_need_not_validate_again(
    config: Path, tmp_path: Path
) -> None:
    """`run` and `check-config` remember the files' own configuration as they load it."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    checked = subprocess.run(
        [sys.executable, "-m", "service.cli", "check-config", "--config", str(config)],
        capture_output=True, text=True, env=env, timeout=120, check=False)
    assert checked.returncode == 0, checked.stderr
    done, validated = status(config, tmp_path)
    assert not validated and accounts(done) == ["alpha", "beta"]


def test_an_edit_is_validated_again_and_a_bad_one_is_refused_every_time(
    config: Path, tmp_path: Path
) -> None:
    status(config, tmp_path)
    instruments = config.with_name("instruments.toml")
    instruments.write_text('[accounts.alpha]\nsymbols = ["SPY"]\n')  # beta now idle
    edited, validated = status(config, tmp_path)
    assert validated and accounts(edited) == ["alpha", "beta"]
    assert [a["state"] for a in json.loads(edited.stdout)["accounts"]][1] == "idle"

    instruments.write_text('[accounts.gamma]\nsymbols = ["SPY"]\n')  # no such account
    for _ in range(2):
        refused, _ = status(config, tmp_path)
        assert refused.returncode == 78 and "accounts.gamma" in refused.stderr


def test_a_summary_round_trips_and_a_damaged_entry_is_a_miss(
    config: Path, tmp_path: Path
) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    loaded = load_config(config)
    assert config_cache.recall(config, env) is None
    config_cache.remember(loaded, env)
    assert config_cache.recall(config, env) == loaded.summary()
    [entry] = (tmp_path / "cache" / "regime-trader" / "validated").iterdir()
    entry.write_text("{not json")
    assert config_cache.recall(config, env) is None
    # a configuration changed after loading (a reload) carries no digests: not remembered
    config_cache.remember(loaded.with_instruments(loaded.instruments), {
        "XDG_CACHE_HOME": str(tmp_path / "other")})
    assert not (tmp_path / "other").exists()


def test_the_record_keeps_its_newest_entries_only(tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    for n in range(config_cache.KEEP_ENTRIES + 3):
        config_cache.remember(load_config(write_config(tmp_path / f"c{n}", SETTINGS,
                                                       INSTRUMENTS)), env)
    kept = list((tmp_path / "cache" / "regime-trader" / "validated").glob("*.json"))
    assert len(kept) == config_cache.KEEP_ENTRIES
    newest = tmp_path / f"c{config_cache.KEEP_ENTRIES + 2}" / "service.toml"
    assert config_cache.recall(newest, env) is not None
