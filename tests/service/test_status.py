"""`status`: whether the daemon runs, and per account its state, money, P&L and positions
beside the targets, read from hand-built state directories without writing to them.
(tests/http/test_status_and_http_daemon.py asks a real daemon.)"""

from __future__ import annotations

import io
import json
import os
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from service.config_loader import LoadedConfig, load_config
from service.state import checkpoint_codec, status_reads
from service.state.paths import LOCK_NAME, lock_holder, state_path
from service.state.runtime_file import write_runtime
from service.state.store import Checkpoint, DecisionRow, StateStore
from service.state_dir import resolve_state_dir
from service.status import EXIT_NOT_HEALTHY, run_status, status_document
from service.status.pnl import trading_day_start
from service.status.render import render_text
from service.supervisor.runtime_status import RuntimeStatus
from service.supervisor.state_lock import StateDirLockedError, hold_state_lock
from service.types import BrokerSnapshot, OrderIntent, OrderOutcome, OrderStatus, Position, Side

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
DAY1 = datetime(2026, 1, 5, 14, 31, tzinfo=UTC)  # 09:31 in New York, Monday 5 January
SETTINGS = '[[accounts]]\nname = "alpha"\n\n[[accounts]]\nname = "beta"\n'
INSTRUMENTS = '[accounts.alpha]\nsymbols = ["SPY", "QQQ"]\n\n[accounts.beta]\nsymbols = ["AAPL"]\n'


@pytest.fixture
def config(tmp_path: Path) -> LoadedConfig:
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "instruments.toml").write_text(INSTRUMENTS)
    (folder / "service.toml").write_text(SETTINGS)
    return load_config(folder / "service.toml")


@pytest.fixture
def state(tmp_path: Path) -> Path:
    folder = tmp_path / "state"
    folder.mkdir()
    return folder


def book(held: dict[str, tuple[float, float]], closes: dict[str, float],
         targets: dict[str, float | None] | None = None) -> dict[str, Any]:
    """A checkpoint's book: the broker's positions {symbol: (qty, avg entry)}, each
    instrument's last close and target (None: no decision yet)."""
    targets = targets if targets is not None else {s: 0.0 for s in closes}
    return {
        "cursor": 0,
        "instruments": {s: {"last_close": c, "regime": 0, "retiring": False,
                            "last_bar_time": None,
                            "decision": None if targets[s] is None else {
                                "invested": True, "target_weight": 0.1,
                                "target_qty": targets[s]}}
                        for s, c in closes.items()},
        checkpoint_codec.POSITIONS_KEY: checkpoint_codec.positions_entry(BrokerSnapshot(
            0.0, 0.0, {s: Position(s, q, p) for s, (q, p) in held.items()})),
    }  # fmt: skip


def update(store: StateStore, seq: int, when: datetime, cash: float, equity: float,
           the_book: dict[str, Any], decisions: tuple[DecisionRow, ...] = (),
           intents: tuple[OrderIntent, ...] = ()) -> None:
    store.commit_update(Checkpoint(seq, when, "h", "numpy", "cpu", "float64", cash, equity,
                                   b"model", the_book), list(decisions), list(intents))


def decision(symbol: str, qty: float, regime: int = 0, p: float = 0.2) -> DecisionRow:
    return DecisionRow(symbol, regime, p, 0.0, 0.01, True, 0.5, qty)


def two_days(state: Path, retention: int = 500) -> Path:
    """alpha over two New York days: flat; buys 10 SPY at 100; marks up overnight; then
    sells 5 at 108 (40 realised) and marks at 107."""
    store = StateStore(state_path(state, "alpha"), retention)
    flat = book({}, {"SPY": 100.0})
    update(store, 1, DAY1, 100_000.0, 100_000.0, flat)
    update(store, 2, DAY1 + timedelta(hours=6, minutes=28), 99_000.0, 100_040.0,
           book({"SPY": (10.0, 100.0)}, {"SPY": 104.0}, {"SPY": 10.0}))
    # 02:00 UTC on the 6th is 21:00 on the 5th in New York: still the 5th's trading day
    update(store, 3, datetime(2026, 1, 6, 2, 0, tzinfo=UTC), 99_000.0, 100_050.0,
           book({"SPY": (10.0, 100.0)}, {"SPY": 105.0}, {"SPY": 10.0}))
    update(store, 4, DAY1 + timedelta(days=1), 99_540.0, 100_075.0,
           book({"SPY": (5.0, 100.0)}, {"SPY": 107.0}, {"SPY": 5.0}),
           (decision("SPY", 5.0, 1, 0.7),))
    store.close()
    return state_path(state, "alpha")


def alpha_of(doc: dict[str, Any]) -> dict[str, Any]:
    return next(a for a in doc["accounts"] if a["account"] == "alpha")


def runtime(pid: int, heartbeat: datetime, accounts: dict[str, Any] | None = None,
            stopped: bool = False) -> dict[str, Any]:
    doc = {"pid": pid, "version": "0.1.0", "started_at": (heartbeat - timedelta(hours=1))
           .isoformat(), "heartbeat_at": heartbeat.isoformat(), "config_hash": "h",
           "http": None, "stopping": False, "accounts": accounts or {}}
    return {**doc, "stopped_at": heartbeat.isoformat()} if stopped else doc


def worker(state: str = "running", **fields: Any) -> dict[str, Any]:
    return {"state": state, "paused": False, "reason": None, "worker_pid": 4242,
            "restarts": 0, "last_seq": 4, "last_update": None, "last_error": None,
            "worker_error": None, "parked_reason": None, "updates": 4, **fields}


@pytest.fixture
def held(state: Path) -> Iterator[None]:
    """The state directory's lock, held by this process (as a daemon holds it)."""
    with hold_state_lock(state):
        yield


# -- P&L -----------------------------------------------------------------------------------


def test_pnl_since_start_and_today_split_into_realised_and_unrealised(
    state: Path, config: LoadedConfig
) -> None:
    two_days(state)
    alpha = alpha_of(status_document(config, state, NOW))
    assert (alpha["equity"], alpha["cash"]) == (100_075.0, 99_540.0)
    assert alpha["pnl"]["since_start"] == {
        "total": 75.0, "realised": 40.0, "unrealised": 35.0, "from_seq": 1,
        "from_bar_time": DAY1.isoformat(), "from_equity": 100_000.0}
    today = alpha["pnl"]["today"]
    assert (today["day"], today["from_seq"], today["from_equity"]) == ("2026-01-06", 3, 100_050.0)
    assert (today["total"], today["realised"], today["unrealised"]) == (25.0, 40.0, -15.0)


def test_a_pruned_baseline_keeps_the_total_and_splits_only_when_it_was_flat(
    state: Path, config: LoadedConfig
) -> None:
    two_days(state, retention=1)  # only the last checkpoint is kept
    pnl = alpha_of(status_document(config, state, NOW))["pnl"]
    assert pnl["since_start"]["realised"] == 40.0  # flat then: equity was cash
    assert pnl["today"]["total"] == 25.0
    assert (pnl["today"]["realised"], pnl["today"]["unrealised"]) == (None, None)


def test_the_trading_day_is_new_yorks_in_winter_and_summer() -> None:
    assert trading_day_start(datetime(2026, 1, 6, 2, 0, tzinfo=UTC)) == datetime(
        2026, 1, 5, 5, 0, tzinfo=UTC)  # EST: UTC-5
    assert trading_day_start(datetime(2026, 7, 6, 3, 0, tzinfo=UTC)) == datetime(
        2026, 7, 5, 4, 0, tzinfo=UTC)  # EDT: UTC-4


def test_history_starting_today_is_today_since_the_first_update(
    state: Path, config: LoadedConfig
) -> None:
    store = StateStore(state_path(state, "alpha"))
    update(store, 1, DAY1, 1_000.0, 1_000.0, book({}, {"SPY": 10.0}))
    update(store, 2, DAY1 + timedelta(minutes=1), 990.0, 1_001.0,
           book({"SPY": (1.0, 10.0)}, {"SPY": 11.0}))
    store.close()
    pnl = alpha_of(status_document(config, state, NOW))["pnl"]
    assert pnl["today"]["from_seq"] == pnl["since_start"]["from_seq"] == 1
    assert (pnl["today"]["total"], pnl["today"]["realised"], pnl["today"]["unrealised"]) == (
        1.0, 0.0, 1.0)


# -- positions, targets, orders -------------------------------------------------------------------


def test_positions_are_the_brokers_beside_the_targets_with_closes_and_regimes(
    state: Path, config: LoadedConfig
) -> None:
    store = StateStore(state_path(state, "alpha"))
    update(store, 1, DAY1, 0.0, 0.0, book({}, {"SPY": 1.0, "QQQ": 1.0}),
           (decision("SPY", 1.0), decision("QQQ", 2.0, 1, 0.9)))
    update(store, 2, DAY1 + timedelta(minutes=1), 500.0, 1_550.0,
           book({"SPY": (7.0, 100.0), "GLD": (3.0, 50.0)}, {"SPY": 110.0, "QQQ": 20.0},
                {"SPY": 9.0, "QQQ": 2.0}),
           (decision("SPY", 9.0, 0, 0.1),),
           (OrderIntent("rt-alpha-2-SPY", "SPY", Side.BUY, 2.0),))
    store.close()
    alpha = alpha_of(status_document(config, state, NOW))
    rows = {p["symbol"]: p for p in alpha["positions"]}
    assert rows["SPY"] == {"symbol": "SPY", "held": 7.0, "target": 9.0, "last_close": 110.0,
                           "avg_entry_price": 100.0, "unrealised": 70.0, "regime": 0,
                           "p_turbulent": 0.1, "warming": False}
    # not in this update's batch: its last decision's probability
    assert (rows["QQQ"]["held"], rows["QQQ"]["target"], rows["QQQ"]["p_turbulent"]) == (
        0.0, 2.0, 0.9)
    # held but out of the rotation (kept on removal): no close, so no unrealised
    assert (rows["GLD"]["target"], rows["GLD"]["unrealised"]) == (None, None)
    [order] = alpha["open_orders"]
    assert (order["client_order_id"], order["side"], order["qty"], order["status"]) == (
        "rt-alpha-2-SPY", "buy", 2.0, "pending")


def test_open_orders_are_the_intents_not_yet_final(state: Path, config: LoadedConfig) -> None:
    store = StateStore(state_path(state, "alpha"))
    symbols = ["A", "B", "C", "D", "E", "F", "G"]
    update(store, 1, DAY1, 0.0, 0.0, book({}, {}),
           intents=tuple(OrderIntent(f"rt-alpha-1-{s}", s, Side.BUY, 1.0) for s in symbols))
    for symbol, status in zip(symbols, [OrderStatus.FILLED, OrderStatus.REJECTED,
                                        OrderStatus.CANCELED, OrderStatus.EXPIRED,
                                        OrderStatus.ACCEPTED, OrderStatus.PARTIALLY_FILLED],
                              strict=False):  # G stays pending
        store.record_outcomes([OrderOutcome(f"rt-alpha-1-{symbol}", status)])
    store.close()
    orders = alpha_of(status_document(config, state, NOW))["open_orders"]
    assert [(o["symbol"], o["status"]) for o in orders] == [
        ("E", "accepted"), ("F", "partially_filled"), ("G", "pending")]


def test_the_book_keys_are_the_checkpoints() -> None:
    assert status_reads.WARMING_KEY == checkpoint_codec.WARMING_KEY


def test_positions_of_a_checkpoint_written_before_they_were_columns_are_read(
    state: Path, config: LoadedConfig
) -> None:
    """Up to the eighteenth session's release a book held the broker's positions as an
    object per symbol: such a checkpoint shows them as the columns do."""
    store = StateStore(state_path(state, "alpha"))
    the_book = book({}, {"SPY": 110.0}, {"SPY": 9.0})
    del the_book[checkpoint_codec.POSITIONS_KEY]
    the_book["broker_positions"] = {"SPY": {"qty": 7.0, "avg_entry_price": 100.0},
                                    "GLD": {"qty": -3.0, "avg_entry_price": 50.0}}
    update(store, 1, DAY1, 500.0, 1_550.0, the_book, (decision("SPY", 9.0, 0, 0.1),))
    store.close()
    rows = {p["symbol"]: p for p in alpha_of(status_document(config, state, NOW))["positions"]}
    assert (rows["SPY"]["held"], rows["SPY"]["avg_entry_price"], rows["SPY"]["unrealised"]) == (
        7.0, 100.0, 70.0)
    assert (rows["GLD"]["held"], rows["GLD"]["avg_entry_price"]) == (-3.0, 50.0)


def test_live_without_a_broker_book_says_why_and_keeps_the_checkpoints_figures(
    state: Path, config: LoadedConfig
) -> None:
    two_days(state)
    alpha = alpha_of(status_document(config, state, NOW, live=True))
    assert (alpha["source"], alpha["equity"]) == ("checkpoint", 100_075.0)
    assert "no simulated broker book" in alpha["live_error"]
    assert not (state / "alpha.sim-broker.sqlite").exists()  # asking made no book


# -- the daemon --------------------------------------------------------------------------------


def test_a_state_dir_no_daemon_ran_on_says_never_ran_and_stays_untouched(
    state: Path, config: LoadedConfig
) -> None:
    out = io.StringIO()
    assert run_status(config, state, True, out, now=NOW) == EXIT_NOT_HEALTHY
    doc = json.loads(out.getvalue())
    assert doc["daemon"]["state"] == "never_ran" and doc["healthy"] is False
    assert [(a["account"], a["state"], a["health"]) for a in doc["accounts"]] == [
        ("alpha", "not_running", "down"), ("beta", "not_running", "down")]
    assert list(state.iterdir()) == []  # no lock file, no database made


def test_a_held_lock_with_a_fresh_heartbeat_is_running(
    state: Path, config: LoadedConfig, held: None
) -> None:
    now = datetime.now(UTC)
    write_runtime(state, runtime(os.getpid(), now - timedelta(seconds=1), {"alpha": worker()}))
    two_days(state)
    doc = status_document(config, state, now)
    assert (doc["daemon"]["state"], doc["daemon"]["pid"], doc["healthy"]) == (
        "running", os.getpid(), True)
    assert [(a["state"], a["health"]) for a in doc["accounts"]] == [
        ("running", "ok"), ("starting", "ok")]  # beta: not in the runtime file yet


def test_a_held_lock_with_an_old_heartbeat_is_unresponsive(
    state: Path, config: LoadedConfig, held: None
) -> None:
    now = datetime.now(UTC)
    write_runtime(state, runtime(os.getpid(), now - timedelta(seconds=60), {"alpha": worker()}))
    doc = status_document(config, state, now)
    assert doc["daemon"]["state"] == "unresponsive" and doc["daemon"]["pid"] == os.getpid()
    assert "60s old" in doc["daemon"]["reason"] and doc["healthy"] is False
    assert alpha_of(doc)["state"] == "unknown"


def test_a_held_lock_without_the_holders_heartbeat_is_starting_then_unresponsive(
    state: Path, config: LoadedConfig, held: None
) -> None:
    now = datetime.now(UTC)
    write_runtime(state, runtime(1, now - timedelta(hours=1), stopped=True))  # the last run's
    assert status_document(config, state, now)["daemon"]["state"] == "starting"
    long_ago = (now - timedelta(minutes=5)).timestamp()
    os.utime(state / LOCK_NAME, (long_ago, long_ago))
    assert status_document(config, state, now)["daemon"]["state"] == "unresponsive"


def test_a_free_lock_after_a_clean_stop_is_stopped_else_crashed(
    state: Path, config: LoadedConfig
) -> None:
    (state / LOCK_NAME).write_text("4242\n")
    write_runtime(state, runtime(4242, NOW, {"alpha": worker("stopped")}, stopped=True))
    doc = status_document(config, state, NOW + timedelta(hours=2))
    assert (doc["daemon"]["state"], doc["daemon"]["stopped_at"]) == ("stopped", NOW.isoformat())
    assert (alpha_of(doc)["state"], alpha_of(doc)["last_state"]) == ("not_running", "stopped")
    write_runtime(state, runtime(4242, NOW, {"alpha": worker()}))
    crashed = status_document(config, state, NOW + timedelta(hours=2))["daemon"]
    assert crashed["state"] == "crashed" and "without a clean stop" in crashed["reason"]


def test_a_malformed_runtime_file_is_unknown_and_the_accounts_are_still_read(
    state: Path, config: LoadedConfig
) -> None:
    two_days(state)
    (state / "daemon.status.json").write_text("[1, 2")
    doc = status_document(config, state, NOW)
    assert doc["daemon"]["state"] == "unknown" and "daemon.status.json" in doc["daemon"]["reason"]
    assert alpha_of(doc)["equity"] == 100_075.0


def test_lock_holder_tests_the_lock_without_keeping_or_making_it(state: Path) -> None:
    assert lock_holder(state) is None and not (state / LOCK_NAME).exists()
    with hold_state_lock(state):
        assert lock_holder(state) == os.getpid()
        with pytest.raises(StateDirLockedError) as refused, hold_state_lock(state):
            pass
        assert refused.value.holder_pid == os.getpid()
    assert lock_holder(state) is None
    with hold_state_lock(state):  # the probe left nothing held
        pass


# -- account states --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "state_word", "health"),
    [
        ({}, "running", "ok"),
        ({"paused": True}, "paused", "ok"),
        ({"state": "parked", "reason": "restart budget exhausted"}, "parked", "down"),
        ({"state": "hung"}, "hung", "down"),
        ({"state": "restarting"}, "restarting", "down"),
        ({"state": "retired"}, "starting", "ok"),  # back in the file: a new worker comes
    ],
)
def test_the_workers_state_comes_from_the_running_daemon(
    state: Path, config: LoadedConfig, held: None, fields: dict[str, Any], state_word: str,
    health: str,
) -> None:
    now = datetime.now(UTC)
    write_runtime(state, runtime(os.getpid(), now, {"alpha": worker(**fields)}))
    two_days(state)
    alpha = alpha_of(status_document(config, state, now))
    assert (alpha["state"], alpha["health"]) == (state_word, health)
    assert alpha["reason"] == fields.get("reason")


def test_an_account_with_only_warming_instruments_is_warming_up(
    state: Path, config: LoadedConfig, held: None
) -> None:
    now = datetime.now(UTC)
    write_runtime(state, runtime(os.getpid(), now, {"alpha": worker()}))
    store = StateStore(state_path(state, "alpha"))
    cold = {**book({}, {"SPY": 1.0}, {"SPY": None}),
            "warming": {"SPY": {"bars_available": 3, "bars_needed": 129, "stage": "history"}}}
    update(store, 1, DAY1, 10.0, 10.0, cold)
    store.close()
    alpha = alpha_of(status_document(config, state, now))
    assert alpha["state"] == "warming_up" and alpha["positions"][0]["warming"] is True
    assert "SPY  warming up: 3 of 129 bars" in render_text(status_document(config, state, now))


def test_an_account_out_of_the_instruments_file_is_retired_or_idle(
    state: Path, config: LoadedConfig, held: None
) -> None:
    (config.instruments_path).write_text('[accounts.beta]\nsymbols = ["AAPL"]\n')
    beta_only = load_config(config.settings_path)
    now = datetime.now(UTC)
    write_runtime(state, runtime(os.getpid(), now, {"beta": worker()}))
    assert alpha_of(status_document(beta_only, state, now))["health"] == "idle"
    two_days(state)
    doc = status_document(beta_only, state, now)
    assert (alpha_of(doc)["state"], alpha_of(doc)["health"], doc["healthy"]) == (
        "retired", "retired", True)


def test_an_unreadable_database_is_said_with_what_to_do(state: Path, config: LoadedConfig) -> None:
    state_path(state, "alpha").write_bytes(b"this is not sqlite" * 100)
    alpha = alpha_of(status_document(config, state, NOW))
    assert alpha["health"] == "unreadable" and "Move it aside" in alpha["error"]
    state_path(state, "alpha").unlink()
    two_days(state)  # now a database of a schema version this build cannot read
    with sqlite3.connect(state_path(state, "alpha")) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()
    alpha = alpha_of(status_document(config, state, NOW))
    assert "schema version 99" in alpha["error"] and "regime-trader version" in alpha["error"]


def test_reading_status_changes_nothing_in_the_database(state: Path, config: LoadedConfig) -> None:
    database = two_days(state)
    content, mtime = database.read_bytes(), database.stat().st_mtime
    status_document(config, state, NOW)
    assert (database.read_bytes(), database.stat().st_mtime) == (content, mtime)
    wal = database.with_name(database.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0


def test_the_runtime_keeps_the_workers_own_error_beside_the_supervisors_answer(
    state: Path,
) -> None:
    status = RuntimeStatus(state, "h")
    status.on_event({"event": "state.unusable", "account": "alpha", "level": "error",
                     "pid": os.getpid() + 1, "reason": "belongs to account 'beta'"})
    status.on_event({"event": "account.parked", "account": "alpha", "level": "error",
                     "pid": os.getpid(), "reason": "refused to start with 78"})
    alpha = status.accounts["alpha"]
    assert alpha.worker_error is not None and alpha.last_error is not None
    assert (alpha.worker_error["event"], alpha.last_error["event"]) == (
        "state.unusable", "account.parked")


# -- output ----------------------------------------------------------------------------------


def test_a_shared_device_process_has_its_line_under_the_daemon(
    state: Path, config: LoadedConfig, held: None
) -> None:
    now = datetime.now(UTC)
    device = {"state": "running", "pid": 4321, "starts": 2}
    write_runtime(state, {**runtime(os.getpid(), now, {"alpha": worker()}), "device": device})
    doc = status_document(config, state, now)
    assert doc["daemon"]["device"] == device
    assert render_text(doc).splitlines()[2] == "device  running, pid 4321, started 2 times"
    write_runtime(state, runtime(os.getpid(), now, {"alpha": worker()}))  # an older daemon's
    assert status_document(config, state, now)["daemon"]["device"] is None


def test_the_text_is_one_aligned_block_per_account(
    state: Path, config: LoadedConfig, held: None
) -> None:
    now = datetime.now(UTC)
    parked = worker("parked", reason="restart budget exhausted",
                    last_error={"event": "worker.exited", "at": "t", "exit_code": 99})
    write_runtime(state, runtime(os.getpid(), now, {"alpha": worker(), "beta": parked}))
    two_days(state)
    lines = render_text(status_document(config, state, now)).splitlines()
    assert lines[0].startswith(f"daemon  running: pid {os.getpid()}")
    assert "alpha  running" in lines and "beta  parked: restart budget exhausted" in lines
    assert "  P&L today     +25.00 on 2026-01-06  (realised +40.00, unrealised -15.00; " \
           "from seq 3)" in lines
    header = next(line for line in lines if line.lstrip().startswith("SYMBOL"))
    spy = next(line for line in lines if line.lstrip().startswith("SPY"))
    assert spy.split() == ["SPY", "5", "5", "107.00", "100.00", "35.00", "1", "0.700"]
    assert header.index("P(TURBULENT)") + len("P(TURBULENT)") == len(spy)  # right-aligned
    assert "  last error    worker.exited at t: exit_code 99" in lines


def test_the_exit_code_is_zero_only_when_healthy(
    state: Path, config: LoadedConfig, held: None
) -> None:
    now = datetime.now(UTC)
    write_runtime(state, runtime(os.getpid(), now, {"alpha": worker(), "beta": worker()}))
    assert run_status(config, state, False, io.StringIO(), now=now) == 0
    write_runtime(state, runtime(os.getpid(), now, {"alpha": worker(), "beta": worker("hung")}))
    assert run_status(config, state, False, io.StringIO(), now=now) == EXIT_NOT_HEALTHY


# -- the state directory -----------------------------------------------------------------------


def test_the_state_dir_is_never_the_current_directory(
    config: LoadedConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    home = {"HOME": "/home/op"}
    assert resolve_state_dir(None, config, home) == Path("/home/op/.local/state/regime-trader")
    assert resolve_state_dir(None, config, {**home, "XDG_STATE_HOME": "/x/state"}) == Path(
        "/x/state/regime-trader")
    assert resolve_state_dir(None, config, {**home, "XDG_STATE_HOME": "rel"}) == Path(
        "/home/op/.local/state/regime-trader")  # a relative XDG path is ignored
    env = {**home, "STATE_DIRECTORY": "/var/lib/regime-trader"}
    assert resolve_state_dir(None, config, env) == Path("/var/lib/regime-trader")
    assert resolve_state_dir(Path("here"), config, env) == tmp_path / "here"
    config.settings_path.write_text('state_dir = "db"\n' + SETTINGS)
    beside = load_config(config.settings_path)
    assert resolve_state_dir(None, beside, home) == config.settings_path.parent / "db"
