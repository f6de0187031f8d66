"""The agreement check's |z| bound is a t quantile at the normal's 3-sigma tail."""

from __future__ import annotations

import math

import pytest

from gpu_backend.agreement_threshold import TAIL, t_bound, t_tail, z_max


def test_the_t_distribution_matches_its_printed_tables() -> None:
    assert t_bound(0.05, 10) == pytest.approx(2.2281, abs=1e-4)
    assert t_bound(0.01, 6) == pytest.approx(3.7074, abs=1e-4)
    assert t_tail(3.0, 6) == pytest.approx(0.0240, abs=1e-4)


def test_the_bound_means_three_sigma_whatever_the_replicates() -> None:
    assert abs(TAIL - 0.0027) < 1e-4  # P(|Z| > 3)
    # the quick check's 4 replicates per backend: 6 degrees of freedom
    assert z_max(4) == pytest.approx(4.90, abs=0.01)
    assert t_tail(z_max(4), 6) == pytest.approx(TAIL, rel=1e-6)
    bounds = [z_max(r) for r in (2, 3, 4, 6, 20, 500)]
    assert bounds == sorted(bounds, reverse=True)
    assert z_max(500) == pytest.approx(3.0, abs=0.01)  # many replicates: the normal's 3
    assert math.isfinite(z_max(2))


def test_one_replicate_has_no_variance_to_judge_by() -> None:
    with pytest.raises(ValueError, match="at least 2 replicates"):
        z_max(1)
