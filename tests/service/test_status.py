"""`status`: each account's last checkpoint, targets and health, read without writing."""

from __future__ import annotations

import argparse
import io
import json
import os
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from service.config_loader import LoadedConfig, load_config
from service.state.store import Checkpoint, DecisionRow, StateStore
from service.status import (
    EXIT_NOT_ALL_OK,
    account_status,
    build_report,
    positive_seconds,
    render_text,
    run_status,
)
from service.types import OrderIntent, OrderOutcome, OrderStatus, Side

BAR = datetime(2026, 1, 5, 14, 30, tzinfo=UTC)
WRITTEN = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # the mtime the tests give the files
STALE_AFTER_S = 300.0

SETTINGS = """
[[accounts]]
name = "alpha"

[[accounts]]
name = "beta"
"""

INSTRUMENTS = """
[accounts.alpha]
symbols = ["SPY", "QQQ"]

[accounts.beta]
symbols = ["AAPL"]
"""


@pytest.fixture
def config(tmp_path: Path) -> LoadedConfig:
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "instruments.toml").write_text(INSTRUMENTS)
    (folder / "service.toml").write_text(SETTINGS)
    return load_config(folder / "service.toml")


def checkpoint(seq: int, config_hash: str, equity: float = 100_500.0) -> Checkpoint:
    return Checkpoint(
        seq=seq, bar_time=BAR + timedelta(minutes=seq), config_hash=config_hash,
        backend="wgpu", adapter="llvmpipe", numerics="float32", cash=40_000.0, equity=equity,
        model=b"model", book={"cursor": seq},
    )


def decision(symbol: str, qty: float, regime: int = 0, p: float = 0.2) -> DecisionRow:
    return DecisionRow(symbol, regime, p, 0.0, 0.01, True, 0.5, qty)


def intent(seq: int, symbol: str) -> OrderIntent:
    return OrderIntent(f"rt-alpha-{seq}-{symbol}", symbol, Side.BUY, 1.0)


def write_alpha(state_dir: Path, config_hash: str) -> Path:
    """Two updates of alpha; the second holds SPY and QQQ."""
    store = StateStore(state_dir / "alpha.sqlite")
    store.commit_update(checkpoint(1, config_hash, 100_000.0), [decision("SPY", 5.0)], [])
    store.commit_update(
        checkpoint(2, config_hash),
        [decision("SPY", 7.0, 1, 0.81), decision("QQQ", 3.0)],
        [intent(2, "SPY"), intent(2, "QQQ")],
    )
    store.close()
    return state_dir / "alpha.sqlite"


def touch(database: Path, when: datetime) -> None:
    for path in (database, database.with_name(database.name + "-wal")):
        if path.exists():
            os.utime(path, (when.timestamp(), when.timestamp()))


def test_a_fresh_checkpoint_is_ok_with_its_figures_and_targets(
    tmp_path: Path, config: LoadedConfig
) -> None:
    touch(write_alpha(tmp_path, config.config_hash), WRITTEN)
    report = build_report(config, tmp_path, WRITTEN + timedelta(seconds=42), STALE_AFTER_S)
    alpha = report.accounts[0]
    assert (alpha.account, alpha.health, alpha.age_s) == ("alpha", "ok", 42.0)
    s = alpha.snapshot
    assert s is not None
    assert (s.seq, s.bar_time, s.equity, s.cash) == (2, BAR + timedelta(minutes=2), 100_500.0,
                                                      40_000.0)
    assert (s.backend, s.adapter, s.numerics, s.config_hash) == (
        "wgpu", "llvmpipe", "float32", config.config_hash)
    assert [(p.symbol, p.target_qty, p.regime, p.p_turbulent) for p in s.targets] == [
        ("QQQ", 3.0, 0, 0.2), ("SPY", 7.0, 1, 0.81)]


def test_open_intents_are_those_not_yet_final(tmp_path: Path, config: LoadedConfig) -> None:
    store = StateStore(tmp_path / "alpha.sqlite")
    symbols = ["A", "B", "C", "D", "E", "F", "G"]
    store.commit_update(checkpoint(1, "h"), [], [intent(1, s) for s in symbols])
    outcomes = [OrderStatus.FILLED, OrderStatus.REJECTED, OrderStatus.CANCELED,
                OrderStatus.EXPIRED, OrderStatus.ACCEPTED, OrderStatus.PARTIALLY_FILLED]
    for symbol, status in zip(symbols, outcomes, strict=False):  # G stays pending
        store.record_outcome(OrderOutcome(f"rt-alpha-1-{symbol}", status))
    store.close()
    alpha = account_status("alpha", tmp_path / "alpha.sqlite", WRITTEN, STALE_AFTER_S)
    assert alpha.snapshot is not None and alpha.snapshot.open_intents == 3


def test_an_account_without_a_database_or_checkpoint_has_no_state(
    tmp_path: Path, config: LoadedConfig
) -> None:
    StateStore(tmp_path / "beta.sqlite").close()  # created, never updated
    report = build_report(config, tmp_path, WRITTEN, STALE_AFTER_S)
    assert [(a.account, a.health, a.snapshot) for a in report.accounts] == [
        ("alpha", "no-state", None), ("beta", "no-state", None)]
    assert not (tmp_path / "alpha.sqlite").exists()  # status never creates a database


def test_a_checkpoint_older_than_the_threshold_is_stale(
    tmp_path: Path, config: LoadedConfig
) -> None:
    database = write_alpha(tmp_path, config.config_hash)
    touch(database, WRITTEN)
    just_in_time = account_status("alpha", database, WRITTEN + timedelta(seconds=300), 300.0)
    too_late = account_status("alpha", database, WRITTEN + timedelta(seconds=301), 300.0)
    assert (just_in_time.health, too_late.health) == ("ok", "stale")
    assert too_late.snapshot is not None and too_late.snapshot.seq == 2


def test_asking_for_status_does_not_make_a_stale_account_look_fresh(
    tmp_path: Path, config: LoadedConfig
) -> None:
    database = write_alpha(tmp_path, config.config_hash)  # closed: no WAL left behind
    touch(database, WRITTEN)
    late = WRITTEN + timedelta(hours=1)
    first = account_status("alpha", database, late, STALE_AFTER_S)  # the reader makes a WAL
    second = account_status("alpha", database, late, STALE_AFTER_S)
    assert (first.health, second.health) == ("stale", "stale")
    assert first.age_s == second.age_s == 3600.0


def test_the_age_follows_the_wal_while_the_worker_holds_the_database(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "alpha.sqlite")
    store.commit_update(checkpoint(1, "h"), [decision("SPY", 1.0)], [])
    database = tmp_path / "alpha.sqlite"
    os.utime(database, (WRITTEN.timestamp(), WRITTEN.timestamp()))
    wal = tmp_path / "alpha.sqlite-wal"
    assert wal.exists()
    later = WRITTEN + timedelta(seconds=1000)
    os.utime(wal, (later.timestamp(), later.timestamp()))
    alpha = account_status("alpha", database, later + timedelta(seconds=5), STALE_AFTER_S)
    store.close()
    assert (alpha.health, alpha.age_s) == ("ok", 5.0)


def test_reading_status_changes_nothing_in_the_database(
    tmp_path: Path, config: LoadedConfig
) -> None:
    database = write_alpha(tmp_path, config.config_hash)
    touch(database, WRITTEN)
    content, mtime = database.read_bytes(), database.stat().st_mtime
    alpha = account_status("alpha", database, WRITTEN, STALE_AFTER_S)
    assert alpha.health == "ok"
    assert (database.read_bytes(), database.stat().st_mtime) == (content, mtime)
    wal = tmp_path / "alpha.sqlite-wal"
    assert not wal.exists() or wal.stat().st_size == 0


def test_a_file_that_is_not_a_database_is_unreadable_with_what_to_do(tmp_path: Path) -> None:
    database = tmp_path / "alpha.sqlite"
    database.write_bytes(b"this is not sqlite" * 100)
    alpha = account_status("alpha", database, WRITTEN, STALE_AFTER_S)
    assert alpha.health == "unreadable" and alpha.error is not None
    assert str(database) in alpha.error and "Move it aside" in alpha.error


def test_a_database_of_another_schema_version_is_unreadable(tmp_path: Path) -> None:
    database = write_alpha(tmp_path, "h")
    with sqlite3.connect(database) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()
    alpha = account_status("alpha", database, WRITTEN, STALE_AFTER_S)
    assert alpha.health == "unreadable" and alpha.error is not None
    assert "schema version 99" in alpha.error and "regime-trader version" in alpha.error


def test_odd_characters_in_the_state_path_are_not_read_as_uri_syntax(tmp_path: Path) -> None:
    state_dir = tmp_path / "state #1 ?mode=rwc"
    state_dir.mkdir()
    database = write_alpha(state_dir, "h")
    assert account_status("alpha", database, WRITTEN, STALE_AFTER_S).health != "unreadable"


def test_json_output_reports_every_account_and_exits_non_zero_unless_all_ok(
    tmp_path: Path, config: LoadedConfig
) -> None:
    touch(write_alpha(tmp_path, config.config_hash), WRITTEN)
    out = io.StringIO()
    code = run_status(config, tmp_path, True, out, now=WRITTEN + timedelta(seconds=1))
    data = json.loads(out.getvalue())
    assert code == EXIT_NOT_ALL_OK and data["all_ok"] is False
    assert [(a["account"], a["health"]) for a in data["accounts"]] == [
        ("alpha", "ok"), ("beta", "no-state")]
    alpha = data["accounts"][0]
    assert alpha["snapshot"]["bar_time"] == "2026-01-05T14:32:00+00:00"
    assert alpha["snapshot"]["targets"][1] == {
        "symbol": "SPY", "target_qty": 7.0, "regime": 1, "p_turbulent": 0.81}
    assert data["config_hash"] == config.config_hash and data["state_dir"] == str(tmp_path)


def test_the_exit_code_is_zero_when_every_account_is_ok(
    tmp_path: Path, config: LoadedConfig
) -> None:
    write_alpha(tmp_path, config.config_hash)
    beta = StateStore(tmp_path / "beta.sqlite")
    beta.commit_update(checkpoint(1, config.config_hash), [decision("AAPL", 2.0)], [])
    beta.close()
    for database in tmp_path.glob("*.sqlite"):
        touch(database, WRITTEN)
    assert run_status(config, tmp_path, True, io.StringIO(), now=WRITTEN) == 0


def test_the_text_output_aligns_columns_and_lists_targets(
    tmp_path: Path, config: LoadedConfig
) -> None:
    touch(write_alpha(tmp_path, "another-config"), WRITTEN)
    report = build_report(config, tmp_path, WRITTEN + timedelta(seconds=3), STALE_AFTER_S)
    lines = render_text(report).splitlines()
    header, alpha, beta = lines[2:5]
    assert header.startswith("ACCOUNT") and alpha.startswith("alpha")
    assert beta.startswith("beta")
    for column, value in [("HEALTH", "ok"), ("SEQ", "2"), ("AGE", "3s"), ("EQUITY", "100,500.00"),
                          ("BACKEND", "wgpu/llvmpipe/float32")]:
        assert alpha.index(value, header.index(column)) == header.index(column)
    assert beta.index("no-state") == header.index("HEALTH")
    assert "alpha: targets at seq 2  (checkpoint written under another config)" in lines
    assert any(line.split() == ["SPY", "7", "1", "0.810"] for line in lines)
    assert f"beta: no state yet at {tmp_path / 'beta.sqlite'}" in lines


@pytest.mark.parametrize("text", ["0", "-5", "soon", "nan"])
def test_stale_after_must_be_a_positive_number_of_seconds(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=f"got '{text}'"):
        positive_seconds(text)
    assert positive_seconds("90") == 90.0


@pytest.mark.parametrize("age_s", [1.0, 10 * STALE_AFTER_S])
def test_an_account_left_out_of_the_instruments_file_is_retired_fresh_or_stale(
    tmp_path: Path, config: LoadedConfig, age_s: float
) -> None:
    """Retiring is the operator's choice, not a fault: it is reported, it fails nothing."""
    write_alpha(tmp_path, config.config_hash)
    beta = StateStore(tmp_path / "beta.sqlite")
    beta.commit_update(checkpoint(1, config.config_hash), [decision("AAPL", 2.0)], [])
    beta.close()
    for database in tmp_path.glob("*.sqlite"):
        touch(database, WRITTEN)
    folder = tmp_path / "config"
    (folder / "instruments.toml").write_text(INSTRUMENTS[: INSTRUMENTS.index("[accounts.beta]")])
    alpha_only = load_config(folder / "service.toml")
    out = io.StringIO()
    code = run_status(alpha_only, tmp_path, False, out, now=WRITTEN + timedelta(seconds=age_s))
    report = build_report(alpha_only, tmp_path, WRITTEN + timedelta(seconds=age_s), STALE_AFTER_S)
    healths = {a.account: a.health for a in report.accounts}
    assert healths["beta"] == "retired"
    assert "retired" in out.getvalue()
    assert code == (0 if healths["alpha"] == "ok" else EXIT_NOT_ALL_OK)
