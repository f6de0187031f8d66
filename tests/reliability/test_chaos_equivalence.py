"""Kill it anywhere, lose nothing, duplicate nothing: workers SIGKILLed at random fault
points, restarted each time, end exactly where an uninterrupted run over the same bars
ends (service.bench.chaos)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.bench.chaos import CHAOS_POINTS, chaos_settings, draw_fault, run_chaos
from service.bench.daemon_harness import LIGHT_EFFORT


def test_the_kill_points_are_reproducible_from_the_seed() -> None:
    plan = [draw_fault(7, "alpha", i) for i in range(50)]
    assert plan == [draw_fault(7, "alpha", i) for i in range(50)]
    assert plan != [draw_fault(8, "alpha", i) for i in range(50)]
    assert {point for point, _, _ in plan} <= set(CHAOS_POINTS)


@pytest.mark.parametrize("between_bars", ["false", '"auto"'])  # auto: on, numpy is a CPU
def test_10_kills_over_2_accounts_end_in_the_state_of_an_uninterrupted_run(
    tmp_path: Path, between_bars: str
) -> None:
    """10 kills, 5 per account: with seed 5 and the light effort, draw_fault's first five
    points of alpha and beta together hit the four where an order could be lost or doubled
    (in_commit, after_checkpoint, before_post, after_post: a point counts only where its
    update trades, so the plan holds for these estimates), within CI's 10 minutes (each
    incarnation is a fresh process: 18 kills took 39-63 s); the 500-kill run below is the
    slow suite's, at the default effort, every point many times. (Seeds 2, 3 and 5 of 1-8
    hit the four under the Monte Carlo gate; seed 4, chosen before it, no longer does.)
    Both ways the model runs: the sampler at the bar (a GPU's default) and between bars (a
    CPU's), where `model` falls after the commit, once the sampler between bars has run."""
    effort = LIGHT_EFFORT + f"sample_between_bars = {between_bars}\n"
    result = run_chaos(kills=10, seed=5, workdir=tmp_path, settings=chaos_settings(effort))

    assert result["kills"] >= 9
    for account, figures in result["accounts"].items():
        assert figures["differences"] == [], f"{account}: {figures}"
        assert figures["final_seq"] == result["updates_per_account"]
        assert figures["checkpoints_compared"] == figures["final_seq"]
        assert figures["orders"] > 0, "the run must trade, or the order points prove nothing"
    killed_at = {p for f in result["accounts"].values() for p in f["kills_by_point"]}
    assert {"in_commit", "after_checkpoint", "before_post", "after_post"} <= killed_at


@pytest.mark.slow
def test_500_kills_end_in_the_state_of_an_uninterrupted_run(tmp_path: Path) -> None:
    result = run_chaos(kills=500, seed=2026, workdir=tmp_path)

    assert result["kills"] >= 500
    assert result["equivalent"], result
