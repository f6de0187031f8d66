"""Item 4: any legal directory name opens each account's own database, and a database that
belongs to another account is refused (exit 78) instead of being traded on."""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from service.bench.chaos import chaos_settings, worker_process
from service.bench.daemon_harness import LIGHT_EFFORT, write_config
from service.broker.sim import SimBroker
from service.exit_codes import EX_CONFIG
from service.market.synthetic import SyntheticMarket
from service.settings import SyntheticMarketSettings
from service.state.reader import last_seq
from service.state.status_reads import read_snapshot
from service.state.store import Checkpoint, StateStore, UnusableStateError
from service.types import OrderIntent, Side
from service.worker.assembly import sim_broker_path, state_path

T0 = datetime(2026, 1, 5, 14, 30, tzinfo=UTC)
# Each form breaks a naive `file:{path}` URI differently: a fragment, a query, an escape,
# a query parameter; plus spaces, non-ASCII and a name that looks like a URI itself.
DIR_NAMES = ["a#b", "#", "q?mode=ro", "?", "100%", "p%41th", "%23", "with space",
             "ünï-çødé", "a&b=c", "&mode=memory", "=", "file:x", "x?cache=shared#y"]

# The schema of the previous release (schema_version 1, no account, no order epoch).
OLD_SCHEMA = (Path(__file__).parent.parent / "data" / "state_schema_v1.sql").read_text()


def checkpoint(seq: int) -> Checkpoint:
    return Checkpoint(seq=seq, bar_time=T0, config_hash="abc", backend="numpy",
                      adapter="cpu", numerics="float64", cash=1.0, equity=2.0,
                      model=b"model", book={"cursor": 0})


@pytest.mark.parametrize("name", DIR_NAMES)
def test_each_account_opens_its_own_database_whatever_the_directory_is_called(
    tmp_path: Path, name: str
) -> None:
    state = tmp_path / name
    alpha = StateStore(state_path(state, "alpha"), account="alpha")
    beta = StateStore(state_path(state, "beta"), account="beta")
    alpha.commit_update(checkpoint(1), [], [])
    alpha.commit_update(checkpoint(2), [], [])
    try:
        assert beta.latest() is None, "beta sees alpha's checkpoints: one file for both"
    finally:
        alpha.close()
        beta.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [name], "a file outside the dir"
    assert {"alpha.sqlite", "beta.sqlite"} <= {p.name for p in state.iterdir()}
    assert last_seq(state_path(state, "alpha")) == 2
    assert last_seq(state_path(state, "beta")) == 0
    snapshot = read_snapshot(state_path(state, "alpha"))
    assert snapshot is not None and snapshot.seq == 2


@pytest.mark.parametrize("name", DIR_NAMES)
def test_each_simulated_broker_book_is_its_own_file(tmp_path: Path, name: str) -> None:
    state = tmp_path / name
    state.mkdir()
    market_settings = SyntheticMarketSettings(seed=3)
    market = SyntheticMarket(market_settings)
    now = market_settings.start + 200 * market.bar_interval
    alpha = SimBroker(sim_broker_path(state, "alpha"), market, lambda: now)
    beta = SimBroker(sim_broker_path(state, "beta"), market, lambda: now)
    alpha.submit(OrderIntent("rt-alpha-1-SPY", "SPY", Side.BUY, 1.0))
    assert beta.lookup("rt-alpha-1-SPY") is None, "beta's book holds alpha's order"
    alpha.close()
    beta.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_database_of_another_account_is_refused_naming_both_and_the_file(
    tmp_path: Path,
) -> None:
    StateStore(tmp_path / "beta.sqlite", account="beta").close()
    shutil.copy(tmp_path / "beta.sqlite", tmp_path / "alpha.sqlite")
    with pytest.raises(UnusableStateError) as refused:
        StateStore(tmp_path / "alpha.sqlite", account="alpha")
    said = str(refused.value)
    assert "'beta'" in said and "'alpha'" in said and str(tmp_path / "alpha.sqlite") in said


def test_an_old_database_is_stamped_by_its_first_account_then_refused_to_others(
    tmp_path: Path,
) -> None:
    path = tmp_path / "alpha.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
    StateStore(path, account="alpha").close()
    with sqlite3.connect(path) as db:
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    assert meta["account"] == "alpha"
    with pytest.raises(UnusableStateError, match="belongs to account 'alpha'"):
        StateStore(path, account="beta")
    StateStore(path, account="alpha").close()  # its owner opens it again


def test_the_worker_refuses_another_accounts_database_with_78(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config", chaos_settings(LIGHT_EFFORT))
    state = tmp_path / "st#ate"
    StateStore(state_path(state, "beta"), account="beta").close()
    shutil.copy(state_path(state, "beta"), state_path(state, "alpha"))

    refused = worker_process(config, state, "alpha", 2, None)

    assert refused.returncode == EX_CONFIG, refused.stderr
    event = next(json.loads(line) for line in refused.stdout.splitlines()
                 if '"state.unusable"' in line)
    assert "'beta'" in event["reason"] and str(state_path(state, "alpha")) in event["reason"]
