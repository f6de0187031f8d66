"""`regime-trader bench stages`: a real trader, timed stage by stage (figures, not asserted)."""

from __future__ import annotations

from service.bench import stages


def test_bench_stages_times_every_stage_of_a_real_trader_that_trades() -> None:
    figures = stages.measure(instruments=4, window=32, updates=2)
    assert figures["instruments"] == 4 and figures["warm_updates"] == 2
    assert set(figures["cold_ms"]) == set(stages.STAGES) == set(figures["warm_ms"])
    assert all(set(v) == {"p50", "p99", "max"} for v in figures["warm_ms"].values())
    assert figures["cold_ms"]["fetch"] > 0 and figures["warm_ms"]["checkpoint"]["max"] > 0
    # the WAL copied back after each bar, as the worker's loop does, timed apart
    assert set(figures["after_bar_ms"]["wal_backfill"]) == {"p50", "p99", "max"}
    # What the updates cost the database: a stored return is a row of a few tens of bytes
    # (its 8-byte value, symbol, index and SQLite's cell header), stored once
    storage = figures["storage"]
    assert 8 < storage["returns_bytes_per_bar"] < 40
    assert 8 < storage["windows_bytes_per_instrument_checkpoint"] < 40
    # an update's commit: its checkpoint row and a page or two of each table, 4 KB each
    assert 4096 < storage["wal_bytes_per_update"] < 40 * 4096


def test_a_checkpoint_row_does_not_grow_with_the_window() -> None:
    """The windows are stored once as returns, not in every checkpoint (where 4 windows of
    128 more returns would add 4 KB to each row). The tolerance, an eighth of that, covers
    the row's JSON book, whose numbers print to different lengths as the estimates and
    decisions differ between runs (0-104 bytes between these two windows so far)."""
    short = stages.measure(instruments=4, window=32, updates=2)["storage"]
    long = stages.measure(instruments=4, window=160, updates=2)["storage"]
    assert abs(long["checkpoint_row_bytes"] - short["checkpoint_row_bytes"]) < 512


def test_bench_stages_runs_the_model_on_the_backend_named_and_keeps_a_pace() -> None:
    """`--backend wgpu` (the checkpoint then holds the device's float32 carries, as the
    daemon's on a GPU) and `--pace-ms` (updates a pace apart, as the daemon's bars):
    both reported with the figures."""
    figures = stages.measure(instruments=4, window=32, updates=2, backend="wgpu", pace_s=0.001)
    assert figures["backend"] == "wgpu" and figures["pace_s"] == 0.001
    assert figures["warm_ms"]["checkpoint"]["max"] > 0
