"""Effort follows need: an update runs on for the instruments that fail the convergence
gate or whose window has two readings (`needs_more`), up to ModelSpec.extend_max more
blocks of ModelSpec.extension_chains chains each; the others stop after the first block."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from regime_model import deferred_diagnostics
from regime_model.backend import UpdateBatch
from regime_model.deferred_diagnostics import Which
from regime_model.estimate import parameter_diagnostics
from regime_model.sampler import SampleResult
from regime_model.update import ModelSpec, needs_more, refresh

# Short cold runs, so that some instruments fail the gate after the first block.
SPEC = ModelSpec(window=64, warmup_cold=40, draws=12, extend_max=0)
N = 6


class RecordingBackend(NumpyBackend):
    """The numpy backend, keeping every batch it ran."""

    def __init__(self) -> None:
        self.batches: list[UpdateBatch] = []
        self.results: list[SampleResult] = []

    def run_update(self, batch: UpdateBatch) -> SampleResult:
        self.batches.append(batch)
        self.results.append(super().run_update(batch))
        return self.results[-1]


def _run(spec: ModelSpec, backend: NumpyBackend | None = None):  # type: ignore[no-untyped-def]
    returns = 0.01 * regime_returns(N, spec.window, np.random.default_rng(21))
    backend = backend or NumpyBackend()
    return refresh(returns, [None] * N, np.arange(N), 1, 17, spec, backend)


def test_only_the_unconverged_run_on_and_the_rest_are_untouched() -> None:
    first, first_carries, first_info = _run(SPEC)
    failed = np.flatnonzero(needs_more(first, SPEC))
    assert 0 < len(failed) < N, "the setting must leave some instruments needing more"
    assert first_info.extended == 0
    more, more_carries, more_info = _run(replace(SPEC, extend_max=1))
    assert more_info.extended == len(failed)
    assert more_info.gradient_evals > first_info.gradient_evals
    kept = np.setdiff1d(np.arange(N), failed)
    for name, a, b in zip(first._fields, first, more, strict=True):
        np.testing.assert_array_equal(a[kept], b[kept], err_msg=name)
    for i in kept:
        np.testing.assert_array_equal(first_carries[i].position, more_carries[i].position)
    for i in failed:  # run on from its draws: new draws, a carry of the block's chains
        assert not np.array_equal(first_carries[i].position, more_carries[i].position)
        assert more_carries[i].position.shape == (SPEC.extension_chains,
                                                  first_carries[i].position.shape[1])


def test_a_block_runs_extension_chains_from_the_draws_on_the_accounts_window() -> None:
    """The block's lanes are extension_chains per instrument that needs more, warm-started
    (its warm-up is extension_warmup); its window is the account's whole, with the rows it
    runs, so a device reads them from the ring it holds (no upload) and keeps it whole."""
    spec = replace(SPEC, extend_max=1, extension_chains=8, extension_warmup=5)
    backend = RecordingBackend()
    _, _, info = _run(spec, backend)
    main, block = backend.batches
    assert main.window is not None and main.window.rows is None
    assert block.window is not None and block.window.rows is not None
    np.testing.assert_array_equal(block.window.returns, main.window.returns)
    np.testing.assert_array_equal(block.window.scale, main.window.scale)
    rows, C = block.window.rows, block.window.chains
    assert (len(rows), C) == (info.extended, 8)
    np.testing.assert_array_equal(block.y, np.repeat(main.y[:: spec.chains][rows], C, axis=0))
    assert len(block.y) == 8 * info.extended and len(main.y) == spec.chains * N
    assert (block.start.warmup == 5).all() and not block.start.adapt_mass.any()
    # Every start is one of a single instrument's draws of the first block, spread over them.
    draws = backend.results[0].draws.reshape(N, spec.chains * spec.draws, -1)
    for lanes in block.start.position.reshape(info.extended, 8, -1):
        owners = {int(i) for d in lanes for i in np.flatnonzero((draws == d).all(-1).any(1))}
        assert len(owners) == 1
        assert len({tuple(d) for d in lanes}) > 4, "the starts spread over many draws"


def test_two_readings_alone_send_an_instrument_on() -> None:
    """An estimate that meets the gate but whose move is accepted above `two_readings`
    needs more; one below it does not."""
    est, _, _ = _run(SPEC)
    converged = est._replace(converged=np.ones(N, dtype=bool))
    low = converged._replace(shift_acceptance=np.full(N, SPEC.two_readings / 2))
    assert not needs_more(low, SPEC).any()
    high = low._replace(shift_acceptance=np.where(np.arange(N) == 2, 0.05, 0.0))
    assert needs_more(high, SPEC).tolist() == [i == 2 for i in range(N)]


def test_running_on_is_deterministic_and_capped() -> None:
    spec = replace(SPEC, extend_max=3)
    a, a_carries, a_info = _run(spec)
    b, b_carries, b_info = _run(spec)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    for p, q in zip(a_carries, b_carries, strict=True):
        np.testing.assert_array_equal(p.position, q.position)
    assert a_info._replace(draws=None) == b_info._replace(timings_ms=a_info.timings_ms,
                                                          draws=None)  # fmt: skip
    for p, q in zip(a_info.draws or [], b_info.draws or [], strict=True):
        np.testing.assert_array_equal(p, q)
    assert 0 < a_info.extended <= 3 * N
    first, _, _ = _run(SPEC)
    assert a.converged.sum() >= first.converged.sum()


def test_each_instrument_s_parameters_are_diagnosed_once_from_the_run_that_gives_its_estimate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The parameters' R-hat and ESS (a diagnostic, not the gate) run once per update, on
    each instrument's final run: an instrument that runs on is not diagnosed on the first
    run it discards. A narrow instrument's block replaces its first run, so its figures
    are the block's chains' alone."""
    diagnosed: list[tuple[int, int]] = []  # (instruments, chains) of each call

    def counting(result: SampleResult, spec: ModelSpec):  # type: ignore[no-untyped-def]
        diagnosed.append((len(result.draws) // spec.chains, spec.chains))
        return parameter_diagnostics(result, spec)

    monkeypatch.setattr(deferred_diagnostics, "parameter_diagnostics", counting)
    spec = replace(SPEC, extend_max=1, extension_chains=8)
    backend = RecordingBackend()
    estimate, _, info = _run(spec, backend)
    assert 0 < info.extended < N
    assert sorted(diagnosed) == sorted([(N - info.extended, spec.chains), (info.extended, 8)])
    assert np.isfinite(estimate.rhat).all() and np.isfinite(estimate.ess_bulk).all()
    assert not np.isnan(estimate.rhat_decision).any()  # filled from each final run too
    block, ran_on = backend.results[1], backend.batches[1].window.rows  # type: ignore[union-attr]
    found = parameter_diagnostics(block, replace(spec, chains=8))
    for name, values in zip(("rhat", "ess_bulk", "ess_tail"), found, strict=True):
        np.testing.assert_array_equal(getattr(estimate, name)[ran_on], values, err_msg=name)


def test_the_daemon_s_update_diagnoses_only_the_instruments_that_fail_the_gate() -> None:
    """With diagnose "failing" (the worker's update), an instrument whose final estimate
    passes the gate keeps NaN diagnostics, one that fails gets the same figures as with
    every instrument diagnosed (what model.unconverged reports), and nothing else moves."""
    returns = 0.01 * regime_returns(N, SPEC.window, np.random.default_rng(21))

    def run(diagnose: Which):  # type: ignore[no-untyped-def]
        return refresh(returns, [None] * N, np.arange(N), 1, 17, SPEC, NumpyBackend(),
                       diagnose=diagnose)  # fmt: skip

    every, every_carries, _ = run("all")
    failing, failing_carries, _ = run("failing")
    none, none_carries, _ = run("none")
    bad = ~every.converged.astype(bool)
    assert 0 < bad.sum() < N, "the setting must leave some instruments failing the gate"
    for name in deferred_diagnostics.FIELDS:
        np.testing.assert_array_equal(getattr(failing, name)[bad], getattr(every, name)[bad])
        assert np.isnan(getattr(failing, name)[~bad]).all(), name
        assert np.isnan(getattr(none, name)).all(), name  # a benchmark of the sampler alone
    for name in set(every._fields) - set(deferred_diagnostics.FIELDS):
        np.testing.assert_array_equal(getattr(failing, name), getattr(every, name), name)
        np.testing.assert_array_equal(getattr(none, name), getattr(every, name), name)
    for p, q, r in zip(every_carries, failing_carries, none_carries, strict=True):
        np.testing.assert_array_equal(p.position, q.position)
        np.testing.assert_array_equal(p.position, r.position)
