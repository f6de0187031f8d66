"""An instrument that ran on starts its next update wide, with its block's chains, in a
batch beside the first (one device run: batch_join); it narrows back once its estimate
shows a narrow update would have passed (regime_model.width)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from test_effort_follows_need import SPEC, N, RecordingBackend

from gpu_backend.identity import regime_returns
from regime_model.estimate import RegimeEstimate
from regime_model.update import refresh
from regime_model.width import stays_wide

MORE = replace(SPEC, extend_max=1, extension_chains=8, extension_warmup=SPEC.warmup_warm)


def _estimate(mcse: float, vol_mcse: float = 0.0, shift: float = 0.0) -> RegimeEstimate:
    one = np.ones(1)
    return RegimeEstimate(np.array([[0.5, 0.5]]), *(one,) * 13, p_turbulent_mcse=one * mcse,
                          vol_mcse=one * vol_mcse, shift_acceptance=one * shift)  # fmt: skip


def test_a_wide_estimate_keeps_its_width_while_a_narrow_one_would_fail_the_gate() -> None:
    """8 wide chains against 4 narrow: the errors grow by sqrt(2) narrow."""
    assert not stays_wide(_estimate(0.014), MORE)[0]  # 0.0198 narrow: within 0.02
    assert stays_wide(_estimate(0.0142), MORE)[0]  # 0.0201: not
    assert stays_wide(_estimate(0.001, vol_mcse=0.036), MORE)[0]  # 0.051 > 0.05
    assert stays_wide(_estimate(0.001, shift=0.01), MORE)[0]  # two readings


def test_an_instrument_that_ran_on_starts_its_next_update_wide() -> None:
    series = 0.01 * regime_returns(N, MORE.window + 1, np.random.default_rng(21))
    keys = np.arange(N)
    _, carries, info = refresh(series[:, :-1], [None] * N, keys, 1, 17, MORE,
                               RecordingBackend())  # fmt: skip
    wide = [i for i, c in enumerate(carries) if len(c.position) == MORE.extension_chains]
    assert info.extended == len(wide) > 0, "the setting must send some instruments on"
    backend = RecordingBackend()
    _, _, info = refresh(series[:, 1:], carries, keys, 2, 17, MORE, backend)
    narrow_batch, wide_batch = backend.batches[:2]
    # numpy runs the two one after the other: the update reports both runs' time and calls
    narrow, wide_run = backend.results[:2]
    for part in ("warmup", "sampling"):
        assert info.timings_ms[part] == narrow.timings_ms[part] + wide_run.timings_ms[part]
    assert info.gradient_evals >= narrow.gradient_evals + wide_run.gradient_evals
    assert wide_batch.window is not None and narrow_batch.window is not None
    np.testing.assert_array_equal(wide_batch.window.rows, wide)
    assert len(wide_batch.y) == MORE.extension_chains * len(wide)
    assert len(narrow_batch.y) == MORE.chains * (N - len(wide))
    # the same step counts, so a device runs both batches as one
    np.testing.assert_array_equal(wide_batch.schedule.key, narrow_batch.schedule.key)
