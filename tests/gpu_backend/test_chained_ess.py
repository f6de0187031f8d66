"""`bench model`'s chained ESS: R warm updates of one window from each other's carries,
every chain's kept draws joined, so that the worst instrument's ESS comes from chains of
R x draws (autocorrelation one update's short chains cannot see); wide carries run narrow."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from gpu_backend.bench.chained_ess import chained_runs
from gpu_backend.identity import regime_returns
from gpu_backend.numpy_backend import NumpyBackend
from regime_model import deferred_diagnostics
from regime_model.update import InstrumentCarry, ModelSpec, refresh

SPEC = ModelSpec(window=64, warmup_cold=60, draws=12, extend_max=0)
N, UPDATES = 3, 3


def _carries() -> tuple[np.ndarray, list[InstrumentCarry], np.ndarray]:
    window = 0.01 * regime_returns(N, SPEC.window, np.random.default_rng(4))
    keys = np.arange(N)
    _, carries, _ = refresh(window, [None] * N, keys, 1, 17, SPEC, NumpyBackend())
    return window, list(carries), keys


def test_the_chains_of_several_updates_are_joined_before_their_ess_is_taken() -> None:
    window, carries, keys = _carries()
    figures = chained_runs(NumpyBackend(), window, carries, keys, 2, 17, SPEC, UPDATES).figures()
    one_update_most = SPEC.chains * SPEC.draws  # the ESS cap of one update's draws
    assert figures["chained_draws_per_chain"] == UPDATES * SPEC.draws
    assert figures["chained_ess_bulk_median"] > one_update_most  # only joined draws reach it
    assert figures["chained_ess_bulk_min"] <= UPDATES * one_update_most
    assert figures["chained_min_ess_per_s"] > 0


def test_a_wide_carry_runs_narrow_and_the_figures_repeat() -> None:
    window, carries, keys = _carries()
    E = SPEC.extension_chains  # as if the first instrument had run on: its block's chains
    first, copies = carries[0], E // SPEC.chains
    carries[0] = InstrumentCarry(np.repeat(first.position, copies, axis=0),
                                 np.repeat(first.step_size, copies), first.inv_mass)  # fmt: skip
    spec = replace(SPEC, extend_max=2)  # chained updates never run on, whatever the spec
    a = chained_runs(NumpyBackend(), window, carries, keys, 2, 17, spec, UPDATES).figures()
    b = chained_runs(NumpyBackend(), window, carries, keys, 2, 17, spec, UPDATES).figures()
    for name in ("chained_ess_bulk_min", "chained_ess_bulk_median"):
        assert a[name] == b[name]


def test_the_chained_updates_time_the_sampler_without_the_parameters_diagnostics(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # NumPyro's time holds its sampling alone: no parameter's R-hat or ESS is computed in
    # the timed updates, not even the failing instruments' that the daemon's update reports
    window, carries, keys = _carries()
    diagnosed: list[int] = []
    real = deferred_diagnostics._diagnostics

    def counting(result: Any, decision: Any, spec: ModelSpec, picked: Any) -> Any:
        diagnosed.append(len(decision) if picked is None else len(picked))
        return real(result, decision, spec, picked)

    monkeypatch.setattr(deferred_diagnostics, "_diagnostics", counting)
    refresh(window, carries, keys, 2, 17, SPEC, NumpyBackend(), diagnose="failing")
    assert sum(diagnosed) > 0  # the same update as the daemon runs it diagnoses some
    diagnosed.clear()
    chained_runs(NumpyBackend(), window, carries, keys, 2, 17, SPEC, UPDATES).figures()
    assert diagnosed == []
