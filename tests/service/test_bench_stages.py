"""`regime-trader bench stages`: a real trader, timed stage by stage (figures, not asserted)."""

from __future__ import annotations

from service.bench import stages


def test_bench_stages_times_every_stage_of_a_real_trader_that_trades() -> None:
    figures = stages.measure(instruments=4, window=32, updates=2)
    assert figures["instruments"] == 4 and figures["warm_updates"] == 2
    assert set(figures["cold_ms"]) == set(stages.STAGES) == set(figures["warm_ms"])
    assert all(set(v) == {"p50", "p99", "max"} for v in figures["warm_ms"].values())
    assert figures["cold_ms"]["fetch"] > 0 and figures["warm_ms"]["checkpoint"]["max"] > 0
