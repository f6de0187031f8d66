"""The regime model's sampler, unchanged, on posteriordb posteriors with Stan references.

Pass (for every parameter): mean within 0.25 reference sd, sd ratio in [0.9, 1.1], R-hat
< 1.01, bulk ESS >= 400, and no divergences; `regime-trader bench validate` runs the same
(docs/validation.md). hmm_drive_0 is reported in docs/validation-history.md, not gated.
hmm_drive_1 (modes outside the inits, and a minor mode that strands chains) is gated since
the warm-up's stranded-chain restart; it passes on seeds 1, 7, 11 and more
(docs/validation-history.md).
"""

from __future__ import annotations

import pytest

from regime_model.sampler import SamplerConfig
from regime_model.validation.posteriordb.check import compare, run
from service.bench.validate_checks import POSTERIORDB_STEPS
from service.bench.validate_data import reference, target

CHAINS, WARMUP, DRAWS = 4, 1000, 1000
# Leapfrog steps per transition: arK's AR coefficients are strongly correlated, which a
# diagonal metric cannot undo, so it needs longer trajectories to reach ESS 400.
STEPS = POSTERIORDB_STEPS


# hmm_drive_1 takes ~40 s of CI's 10 minutes on 2 cores: it runs in the slow suite and in
# `regime-trader bench validate`; the other HMM (hmm_example) stays in every run.
SLOW = {"bball_drive_event_1-hmm_drive_1"}


@pytest.mark.parametrize(
    "posterior",
    [pytest.param(p, marks=pytest.mark.slow) if p in SLOW else p for p in sorted(STEPS)],
)
def test_sampler_reproduces_the_stan_reference(posterior: str) -> None:
    lo, hi = STEPS[posterior]
    config = SamplerConfig(draws=DRAWS, chains=CHAINS, steps_min=lo, steps_max=hi)
    result = run(target(posterior), config, WARMUP, seed=7)
    checks = compare(target(posterior), result, reference(posterior))
    assert result.divergences.sum() == 0
    failed = [c for c in checks if not c.passed]
    assert not failed, failed
