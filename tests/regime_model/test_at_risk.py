"""Between bars, the instruments at risk of the next bar's gate and how far each runs on
(regime_model.at_risk): reweighed to seven probe bars, an instrument whose draws pass the
gate and whose probes fail it is at risk, and its run on ends at a share of the gate set
by how far over it the worst probe went."""

from __future__ import annotations

import numpy as np
import pytest

from gpu_backend import NumpyBackend
from regime_model.at_risk import AFTER_COLD_BLOCK, LEVELS, PROBES_Z, SAFETY, at_risk, run_on_spec
from regime_model.reweigh import reweigh
from regime_model.sample import Sample, sample_of
from regime_model.update import ModelSpec, refresh
from tests.regime_model.regime_data import two_regime_returns

BACKEND = NumpyBackend()
SPEC = ModelSpec(window=128, warmup_cold=150, warmup_warm=10, draws=20)


@pytest.fixture(scope="module")
def sample() -> Sample:
    """The sample of three instruments' windows, every one passing the gate."""
    returns, _ = two_regime_returns(3, 128, seed=3)
    keys = np.arange(3, dtype=np.uint32) + 10
    estimate, _, info = refresh(returns, [None] * 3, keys, 1, 7, SPEC, BACKEND)
    out = sample_of(returns, estimate, info.draws or [], SPEC, BACKEND)
    return out._replace(estimate=out.estimate._replace(converged=np.ones(3, dtype=bool)))


def test_the_probes_find_an_instrument_the_gate_would_send_to_the_bar(sample) -> None:
    """Reweighed to the next bar at its predictive's quantiles, the first instrument (its
    sample's ESS cut to 2) fails the gate its draws passed; the others (an ESS of a
    million) pass. One not passing to begin with is never at risk, nor one whose
    predictive is not finite."""
    ess = np.array([[2.0, 2.0], [1e6, 1e6], [1e6, 1e6]])
    assert at_risk(sample._replace(ess=ess), SPEC, BACKEND).rows.tolist() == [0]
    failing = sample.estimate._replace(converged=np.array([False, True, True]))
    assert not len(at_risk(sample._replace(estimate=failing, ess=ess), SPEC, BACKEND).rows)
    unknown = sample.estimate._replace(pred_vol=np.array([np.nan, 1.0, 1.0]))
    assert not len(at_risk(sample._replace(estimate=unknown, ess=ess), SPEC, BACKEND).rows)


def _worst_probe(sample: Sample) -> np.ndarray:
    """[N, 2] each decision quantity's largest reweighted error over the probe bars, as a
    share of the gate's bound."""
    worst = np.zeros((len(sample.returns), 2))
    for z in PROBES_Z:
        bar = sample.estimate.pred_mean + z * sample.estimate.pred_vol
        probe = np.concatenate([sample.returns[:, 1:], bar[:, None]], axis=1)
        e = reweigh(sample, np.arange(3), probe, SPEC, BACKEND).estimate
        worst = np.fmax(worst, np.stack([e.p_turbulent_mcse / SPEC.mcse_max,
                                         e.vol_mcse / SPEC.vol_mcse_max], axis=1))  # fmt: skip
    return worst


def test_the_further_over_the_gate_the_worst_probe_the_tighter_the_margin(sample) -> None:
    """The sample's own errors at 0.9 of the gate; its ESS set so that the worst probe's
    are 1.1, 2 and 10 times the gate (a probe's error goes as one over the root of the
    ESS). The run must end with its own errors at SAFETY / 1.1, / 2 and / 10 of 0.9: the
    margins are the largest of at_risk_margin's halvings at or below that (0.6 then 0.3),
    and the last halving where none is (0.15)."""
    r0 = _worst_probe(sample._replace(ess=np.full((3, 2), 1e6)))
    target = np.array([1.1, 2.0, 10.0])
    ess = 1e6 * (r0 / target[:, None]) ** 2
    own = sample.estimate._replace(p_turbulent_mcse=np.full(3, 0.9 * SPEC.mcse_max),
                                   vol_mcse=np.full(3, 0.9 * SPEC.vol_mcse_max))  # fmt: skip
    probed = sample._replace(ess=ess, estimate=own)
    np.testing.assert_allclose(_worst_probe(probed).max(axis=1), target, rtol=1e-9)
    risk = at_risk(probed, SPEC, BACKEND)
    assert risk.rows.tolist() == [0, 1, 2]
    need = SAFETY * 0.9 / target  # 0.65, 0.36, 0.072: 0.6, 0.3, and below 0.15
    assert need[0] >= 0.6 > need[1] >= 0.3 and need[2] < 0.15
    np.testing.assert_allclose(risk.margin, [0.6, 0.3, 0.6 / 2 ** (LEVELS - 1)])
    assert [(m, r.tolist()) for m, r in risk.groups()] == [(0.6, [0]), (0.3, [1]), (0.15, [2])]


def test_an_instrument_at_risk_runs_to_its_margin_with_more_blocks() -> None:
    spec = run_on_spec(SPEC, 0.3)
    assert (spec.mcse_max, spec.vol_mcse_max) == (0.3 * SPEC.mcse_max, 0.3 * SPEC.vol_mcse_max)
    assert spec.extend_max > SPEC.extend_max and spec.draws == SPEC.draws


def test_a_run_on_after_a_cold_start_draws_numbers_of_its_own() -> None:
    """From the carries a cold run left, the run on between bars takes the streams of
    the update's blocks from AFTER_COLD_BLOCK on: other numbers than the update's own
    run's from those carries, the same every time (a restart and replay run it again)."""
    returns, _ = two_regime_returns(2, 128, seed=4)
    keys = np.arange(2, dtype=np.uint32) + 20
    _, carries, _ = refresh(returns, [None] * 2, keys, 1, 7, SPEC, BACKEND)
    own = refresh(returns, carries, keys, 1, 7, SPEC, BACKEND)[2].draws
    after = [refresh(returns, carries, keys, 1, 7, SPEC, BACKEND,
                     first_block=AFTER_COLD_BLOCK)[2].draws for _ in range(2)]  # fmt: skip
    assert all(a.tobytes() == b.tobytes() for a, b in zip(*after, strict=True))
    assert not any(np.array_equal(a, b) for a, b in zip(own, after[0], strict=True))
