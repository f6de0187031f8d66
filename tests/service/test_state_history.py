"""The history tables: one equity row per update and one row per modelled instrument,
written with the checkpoint, kept past the checkpoints' pruning, readable beside a
running daemon, and empty (not an error) in a database migrated from before them."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from service.state import history
from service.state.history import read_equity_history, read_instrument_history, read_orders
from service.state.store import Checkpoint, DecisionRow, StateStore
from service.types import OrderIntent, Side
from tests.service.test_state_migrations import old_database

T0 = datetime(2026, 1, 5, 14, 30, tzinfo=UTC)


def _checkpoint(seq: int) -> Checkpoint:
    return Checkpoint(seq=seq, bar_time=T0 + timedelta(minutes=seq), config_hash="h",
                      backend="numpy", adapter="cpu", numerics="float64",
                      cash=1_000.0 - seq, equity=10_000.0 + seq, model=b"m",
                      book={"cursor": 0})


def _row(symbol: str, seq: int) -> DecisionRow:
    return DecisionRow(symbol, regime=seq % 2, p_turbulent=0.1 * seq, pred_mean=0.0,
                       pred_vol=0.01, converged=seq != 2, target_weight=0.5,
                       target_qty=float(seq), p_turbulent_sd=0.02, close=100.0 + seq,
                       position_qty=float(seq - 1))


def test_every_update_adds_its_equity_and_instrument_rows(tmp_path: Path) -> None:
    path = tmp_path / "alpha.sqlite"
    store = StateStore(path, retention=2, account="alpha")  # checkpoints pruned past 2
    for seq in (1, 2, 3):
        intents = [OrderIntent(f"rt-alpha-{seq}-SPY", "SPY", Side.BUY, 1.0)]
        store.commit_update(_checkpoint(seq), [_row("SPY", seq), _row("QQQ", seq)], intents)
    store.close()
    equity = read_equity_history(path)
    assert [(p.seq, p.equity, p.cash) for p in equity] == [
        (1, 10_001.0, 999.0), (2, 10_002.0, 998.0), (3, 10_003.0, 997.0)]
    assert equity[0].bar_time == T0 + timedelta(minutes=1)
    rows = read_instrument_history(path)
    assert [(p.seq, p.symbol) for p in rows][:3] == [(1, "QQQ"), (1, "SPY"), (2, "QQQ")]
    spy2 = next(p for p in rows if p.seq == 2 and p.symbol == "SPY")
    assert replace(spy2, bar_time=T0) == history.InstrumentPoint(
        2, T0, "SPY", 102.0, 0.2, 0.02, 0, False, 2.0, 1.0)
    assert [o.client_order_id for o in read_orders(path, limit=2)] == [
        "rt-alpha-3-SPY", "rt-alpha-2-SPY"]


def test_instrument_rows_past_their_retention_are_pruned(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(history, "INSTRUMENT_RETENTION", 2)
    path = tmp_path / "alpha.sqlite"
    store = StateStore(path, account="alpha")
    for seq in (1, 2, 3, 4):
        store.commit_update(_checkpoint(seq), [_row("SPY", seq)], [])
    store.close()
    assert [p.seq for p in read_instrument_history(path)] == [3, 4]
    assert [p.seq for p in read_equity_history(path)] == [1, 2, 3, 4]  # tiny: all kept


def test_a_database_from_before_the_history_reads_as_empty_then_migrates(
    tmp_path: Path,
) -> None:
    path = old_database(tmp_path / "alpha.sqlite")
    assert read_equity_history(path) == [] and read_instrument_history(path) == []
    store = StateStore(path, account="alpha")  # migrates to the current version
    store.commit_update(_checkpoint(2), [_row("SPY", 2)], [])
    store.close()
    assert [p.seq for p in read_equity_history(path)] == [2]
