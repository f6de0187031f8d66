"""The soak's verdict (service.bench.soak.summarise): growth is measured after warm-up, per
process, against the pass mark."""

from __future__ import annotations

from typing import Any

from service.bench.soak import summarise


def _sample(minute: int, rss: int, fds: int, state: int) -> dict[str, Any]:
    return {"elapsed_s": 60.0 * minute, "rss_kib": {"supervisor": 50_000, "worker:a": rss},
            "open_fds": {"supervisor": 19, "worker:a": fds}, "pids": {"supervisor": 1,
            "worker:a": 2}, "state_bytes": state, "updates": 100, "update_ms_mean": 10.0}


def test_growth_during_warm_up_does_not_count_and_flat_after_it_passes() -> None:
    samples = [_sample(1, 60_000, 16, 1), *(_sample(m, 100_000 + m, 16, 9) for m in range(2, 61))]
    verdict = summarise(samples, warmup_s=120)
    assert verdict["pass_rss"] and verdict["pass_fds"]
    assert verdict["per_process"]["worker:a"]["rss_growth"] < 0.001


def test_a_leak_of_5_percent_or_one_descriptor_fails() -> None:
    leaking = [_sample(m, 100_000 + 100 * m, 16 + m // 30, 9) for m in range(1, 61)]
    verdict = summarise(leaking, warmup_s=60)
    assert not verdict["pass_rss"] and not verdict["pass_fds"]
