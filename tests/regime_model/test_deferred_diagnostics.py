"""The diagnostics the gate does not read (the parameters', and the decision quantities'
R-hat) run once per instrument, on the run that gives its final estimate, on a pool of
threads that splits them by instruments: the same bits as one call over the whole run."""

from __future__ import annotations

import numpy as np
import pytest

from regime_model.deferred_diagnostics import MIN_SHARE, DeferredDiagnostics
from regime_model.estimate import RegimeEstimate, decision_rhat, parameter_diagnostics
from regime_model.sampler import SampleResult
from regime_model.spec import ModelSpec

SPEC = ModelSpec(chains=4, draws=20)


def _run(instruments: int, seed: int) -> SampleResult:
    """A run's lanes: draws with repeats (rejections), the other fields filler."""
    gen = np.random.default_rng(seed)
    L, S, D = instruments * SPEC.chains, SPEC.draws, 6
    draws = gen.standard_normal((L, S, D)).cumsum(axis=1)
    draws[:, 1::4] = draws[:, 0::4]
    ones = np.ones(L)
    return SampleResult(draws, np.zeros(L, np.int64), ones, ones, np.ones((L, D)), 1, {},
                        np.zeros((L, S)), ones, ones)  # fmt: skip


def _decision(instruments: int, seed: int) -> np.ndarray:
    """A run's decision draws [N, C, S, 2], with repeats."""
    gen = np.random.default_rng(seed + 100)
    draws = gen.uniform(size=(instruments, SPEC.chains, SPEC.draws, 2))
    draws[:, :, 1::4] = draws[:, :, 0::4]
    return draws


def _undiagnosed(n: int, converged: np.ndarray | None = None) -> RegimeEstimate:
    """An estimate whose every field is still NaN, but for the gate's verdict (all pass)."""
    estimate = RegimeEstimate(*(np.full(n, np.nan) for _ in RegimeEstimate._fields))
    return estimate._replace(converged=np.ones(n, dtype=bool) if converged is None else converged)


def test_split_over_threads_the_diagnostics_are_those_of_one_call() -> None:
    n = 3 * MIN_SHARE + 1
    run, decision = _run(n, 1), _decision(n, 1)
    with DeferredDiagnostics(n, threads=3) as later:
        later.note(np.arange(n), run, decision, SPEC)
        out = later.diagnose(_undiagnosed(n))
        assert len(later.pending) >= 3  # at least one share per thread
    wholes = (*parameter_diagnostics(run, SPEC), decision_rhat(decision))
    for name, whole in zip(("rhat", "ess_bulk", "ess_tail", "rhat_decision"), wholes,
                           strict=True):  # fmt: skip
        assert np.isfinite(whole).all()
        np.testing.assert_array_equal(getattr(out, name), whole, err_msg=name)


def test_an_instrument_is_diagnosed_on_the_run_noted_last_and_only_once_settled() -> None:
    n = 10
    first, block = _run(n, 2), _run(4, 3)
    first_decision, block_decision = _decision(n, 2), _decision(4, 3)
    rows = np.array([1, 4, 5, 8])
    with DeferredDiagnostics(n, threads=2) as later:
        later.note(np.arange(n), first, first_decision, SPEC)
        # these keep the first run's estimate
        later.settle(np.setdiff1d(np.arange(n), rows), np.ones(n, dtype=bool))
        later.note(rows, block, block_decision, SPEC)  # these ran on
        out = later.diagnose(_undiagnosed(n))
    kept = np.setdiff1d(np.arange(n), rows)
    on_first, on_block = parameter_diagnostics(first, SPEC), parameter_diagnostics(block, SPEC)
    np.testing.assert_array_equal(out.ess_bulk[kept], on_first[1][kept])
    np.testing.assert_array_equal(out.ess_bulk[rows], on_block[1])
    np.testing.assert_array_equal(out.rhat[rows], on_block[0])
    np.testing.assert_array_equal(out.rhat_decision[kept], decision_rhat(first_decision)[kept])
    np.testing.assert_array_equal(out.rhat_decision[rows], decision_rhat(block_decision))


def test_unless_every_instrument_is_wanted_only_those_failing_the_gate_are_diagnosed() -> None:
    n = 2 * MIN_SHARE
    run, decision = _run(n, 4), _decision(n, 4)
    converged = np.arange(n) % 3 != 0  # a third fail the gate
    with DeferredDiagnostics(n, threads=2, which="failing") as later:
        later.note(np.arange(n), run, decision, SPEC)
        out = later.diagnose(_undiagnosed(n, converged))
    wholes = (*parameter_diagnostics(run, SPEC), decision_rhat(decision))
    for name, whole in zip(("rhat", "ess_bulk", "ess_tail", "rhat_decision"), wholes,
                           strict=True):  # fmt: skip
        np.testing.assert_array_equal(getattr(out, name)[~converged], whole[~converged])
        assert np.isnan(getattr(out, name)[converged]).all(), name


def test_a_choice_of_instruments_other_than_all_failing_or_none_is_refused() -> None:
    with pytest.raises(ValueError, match="all, failing or none, got 'some'"):
        DeferredDiagnostics(4, which="some")  # type: ignore[arg-type]
