"""Effort follows need: an update runs on for the instruments that fail the convergence
gate, up to ModelSpec.extend_max more blocks; the others stop after the first block."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from regime_model.update import ModelSpec, refresh

# Short cold runs, so that some instruments fail the gate after the first block.
SPEC = ModelSpec(window=64, warmup_cold=40, draws=12, extend_max=0)
N = 6


def _run(spec: ModelSpec):  # type: ignore[no-untyped-def]
    returns = 0.01 * regime_returns(N, spec.window, np.random.default_rng(21))
    return refresh(returns, [None] * N, np.arange(N), 1, 17, spec, NumpyBackend())


def test_only_the_unconverged_run_on_and_the_rest_are_untouched() -> None:
    first, first_carries, first_info = _run(SPEC)
    failed = np.flatnonzero(~first.converged)
    assert 0 < len(failed) < N, "the setting must leave some instruments unconverged"
    assert first_info.extended == 0
    more, more_carries, more_info = _run(replace(SPEC, extend_max=1))
    assert more_info.extended == len(failed)
    assert more_info.gradient_evals > first_info.gradient_evals
    kept = np.setdiff1d(np.arange(N), failed)
    for name, a, b in zip(first._fields, first, more, strict=True):
        np.testing.assert_array_equal(a[kept], b[kept], err_msg=name)
    for i in kept:
        np.testing.assert_array_equal(first_carries[i].position, more_carries[i].position)
    for i in failed:  # run on from where its chains stopped: new draws, a new carry
        assert not np.array_equal(first_carries[i].position, more_carries[i].position)


def test_running_on_is_deterministic_and_capped() -> None:
    spec = replace(SPEC, extend_max=3)
    a, a_carries, a_info = _run(spec)
    b, b_carries, b_info = _run(spec)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    for p, q in zip(a_carries, b_carries, strict=True):
        np.testing.assert_array_equal(p.position, q.position)
    assert a_info == b_info._replace(timings_ms=a_info.timings_ms)
    assert 0 < a_info.extended <= 3 * N
    first, _, _ = _run(SPEC)
    assert a.converged.sum() >= first.converged.sum()
