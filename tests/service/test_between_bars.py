"""`[model] sample_between_bars`: the update's sampler runs after its commit; at the next bar
the worker reweighs the draws it left to the new window, and samples at the bar only what
reweighting cannot serve. A restarted worker samples its last window again first, so its
estimates are the ones it would have made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import structlog
from test_trader import Rig

from gpu_backend import NumpyBackend
from regime_model.at_risk import AFTER_COLD_BLOCK, EXTRA_BLOCKS, Risk
from regime_model.update import refresh
from service.bench.chaos import chaos_settings, run_worker_process
from service.bench.daemon_harness import LIGHT_EFFORT, two_account_settings, write_config
from service.broker.base import BrokerError
from service.config_loader import LoadedConfig, load_config
from service.state.store import StateStore
from service.worker import between_bars
from service.worker.assembly import state_path
from service.worker.between_bars import BetweenBars, between_bars_on
from service.worker.replay import replay_update
from service.worker.update_inputs import STAMP_KEY, inputs_of, model_spec


def between_bars_config(folder: Path, model: str = "", extend_max: int = 0) -> LoadedConfig:
    effort = LIGHT_EFFORT + "sample_between_bars = true\n" + model
    settings = two_account_settings(effort=effort)
    settings = settings.replace("extend_max = 0", f"extend_max = {extend_max}")
    return load_config(write_config(folder, settings))


@pytest.mark.parametrize("margin", [1.0, 0.6])
def test_after_the_first_bar_the_bar_reweighs_and_the_sampler_runs_after_the_update(
    tmp_path: Path, margin: float
) -> None:
    config = between_bars_config(tmp_path / "config", f"between_bars_margin = {margin}\n")
    rig = Rig(config, tmp_path / "state")
    rig.trader.resume()
    with structlog.testing.capture_logs() as logs:
        for n in range(4):
            rig.update(n)
    rig.close()
    names = [e["event"] for e in logs if e["event"] in ("update.completed", "model.sampled")]
    assert names == ["update.completed", "model.sampled"] * 4  # each update, then its sample
    models = [e["model"] for e in logs if e["event"] == "update.completed"]
    assert models[0]["sampled_at_bar"] == 3 and models[0]["reweighed"] == 0
    assert models[0]["at_bar_no_draws"] == 3  # no sample yet
    for model in models[1:]:
        assert model["reweighed"] == 3 and model["sampled_at_bar"] == 0
        assert "device_update" not in model  # no sampler run on the bar's path
        assert 0.25 <= model["min_share"] <= 1.0
    sampled = [e for e in logs if e["event"] == "model.sampled"]
    assert [e["seq"] for e in sampled] == [1, 2, 3, 4]
    # At a margin of 1 the first bar's run is reused; below it, it stopped at the gate and
    # the instruments run again between bars, on to the margin.
    reused = 3 if margin == 1.0 else 0
    assert [e["from_the_bar"] for e in sampled] == [reused, 0, 0, 0]
    assert [e["sampled"] for e in sampled] == [3 - reused, 3, 3, 3]


def test_the_bar_reweighs_the_last_sample_whole_to_the_numbers_gathered_per_symbol(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the bar's symbols are the last sample's instruments, the bar reweighs that
    sample as the sampler left it, its filters joined once between bars; gathered row by
    row from samples of their own (as a rotation's slices are), the same checkpoints."""
    whole_at_bar: list[bool] = []  # at each bar's reweighing: was it the kept Sample itself?
    reweigh = between_bars.reweigh

    def spy(sample: Any, *args: Any) -> Any:
        assert isinstance(rig.trader.between, BetweenBars)
        kept = rig.trader.between.kept.values()
        whole_at_bar.append(all(k.sample is sample for k in kept))
        return reweigh(sample, *args)

    monkeypatch.setattr(between_bars, "reweigh", spy)
    books = {}
    for whole in (True, False):
        config = between_bars_config(tmp_path / f"config-{whole}")
        rig = Rig(config, tmp_path / f"state-{whole}")
        rig.trader.resume()
        whole_at_bar.clear()
        for n in range(5):
            between = rig.trader.between
            if not whole and between is not None:  # each symbol's row in a Sample of its own
                between.kept = {s: k._replace(sample=k.sample._replace())
                                for s, k in between.kept.items()}  # fmt: skip
            rig.update(n)
        books[whole] = [(rig.store.checkpoint(seq).book, rig.store.decisions(seq))
                        for seq in (2, 3, 4, 5)]  # fmt: skip: the estimates, as reweighed
        digests = rig.store.model_digests()
        rig.close()
        books[whole].append(digests)
        assert whole_at_bar == [whole] * 4  # the path under test was taken
    assert books[True] == books[False]


def test_between_bars_the_sampler_runs_on_to_the_margin_and_the_gate_judges_its_estimate(
    tmp_path: Path,
) -> None:
    """A margin below 1 runs the sampler between bars on until both decision quantities'
    Monte Carlo errors are within that share of the gate (or its blocks are spent): an
    estimate reweighted to the next window starts that far below the gate. The kept
    estimate's `converged` is the gate's own verdict, which the bar compares against."""
    config = between_bars_config(tmp_path / "config", "between_bars_margin = 0.3\n", 1)
    rig = Rig(config, tmp_path / "state")
    rig.trader.resume()
    for n in range(3):
        rig.update(n)
    between = rig.trader.between
    assert isinstance(between, BetweenBars)
    spec = model_spec(rig.trader.config.settings.model)
    kept = list(between.kept.values())
    p_mcse = np.array([k.estimate.p_turbulent_mcse[0] for k in kept])
    vol_mcse = np.array([k.estimate.vol_mcse[0] for k in kept])
    chains = np.array([len(k.draws) for k in kept]) // spec.draws
    within = (p_mcse <= 0.3 * spec.mcse_max) & (vol_mcse <= 0.3 * spec.vol_mcse_max)
    ran_on = chains > spec.chains  # a block ran (its one block here: it may still be short)
    assert np.all(within | ran_on)
    assert ran_on.any()  # this margin is strict enough that some instrument ran on
    gate = (p_mcse <= spec.mcse_max) & (vol_mcse <= spec.vol_mcse_max)
    divergences = np.array([k.estimate.divergences[0] for k in kept])
    gate &= divergences <= spec.divergence_rate_max * chains * spec.draws
    assert [bool(k.estimate.converged[0]) for k in kept] == list(gate)
    rig.close()


@pytest.mark.parametrize("margin", [1.0, 0.6])
def test_a_worker_restarted_between_bars_makes_the_decisions_it_would_have_made(
    tmp_path: Path, margin: float
) -> None:
    """At a margin below 1 too, where the bar's run is not reused as the sample: the
    restarted worker samples its last window as the uninterrupted one did."""
    config = between_bars_config(tmp_path / "config", f"between_bars_margin = {margin}\n", 1)
    straight = Rig(config, tmp_path / "straight")
    straight.trader.resume()
    for n in range(5):
        straight.update(n)
    want = {seq: straight.store.decisions(seq) for seq in range(1, 6)}
    straight.close()

    first = Rig(config, tmp_path / "restarted")
    first.trader.resume()
    for n in range(3):
        first.update(n)
    first.close()  # the process ends after update 3's commit and its sample: both lost
    again = Rig(config, tmp_path / "restarted")
    assert again.trader.resume() == 3
    for n in (3, 4):
        again.update(n)
    got = {seq: again.store.decisions(seq) for seq in range(1, 6)}
    again.close()
    assert got == want


def test_the_bar_samples_an_instrument_whose_window_is_not_its_sample_moved_on(
    tmp_path: Path,
) -> None:
    """A sample's window that the new one does not continue by whole bars (history
    revised, a gap refilled) is not reweighed: that instrument runs its sampler at the bar,
    the others are reweighed, and the estimate of the one is the sampler's own."""
    rig = Rig(between_bars_config(tmp_path / "config"), tmp_path / "state")
    rig.trader.resume()
    rig.update(0)
    rig.update(1)
    between = rig.trader.between
    assert isinstance(between, BetweenBars)
    symbols = list(between.kept)
    book, seq = rig.trader.model_state, rig.trader.seq + 1
    inputs = inputs_of(book, symbols, seq, rig.trader.config.settings.model.seed)
    moved = np.stack([between.kept[s].returns for s in symbols])
    moved = np.concatenate([moved[:, 1:], np.full((len(symbols), 1), 1e-3)], axis=1)
    moved[0, 10] += 1e-3  # an old bar of the first instrument revised
    revised = inputs._replace(returns=moved)
    estimate, figures, diagnosis = between.estimate(revised)
    with diagnosis:
        diagnosis.wait()
    assert figures["sampled_at_bar"] == 1 and figures["reweighed"] == len(symbols) - 1
    assert figures["at_bar_not_moved"] == 1 and figures["at_bar_gate"] == 0
    spec = model_spec(rig.trader.config.settings.model)
    alone, _, _ = refresh(moved[:1], revised.carries[:1], revised.keys[:1], seq, revised.seed,
                          spec, NumpyBackend(), diagnose="failing")  # fmt: skip
    assert estimate.regime_probs[0].tobytes() == alone.regime_probs[0].tobytes()
    rig.close()


def _kept_margins(config: LoadedConfig, state: Path) -> tuple[dict, dict, list]:
    """After two updates: each kept sample's largest Monte Carlo error as a share of the
    gate and its chains, by the window it sampled, and the updates' model.sampled events."""
    rig = Rig(config, state)
    rig.trader.resume()
    with structlog.testing.capture_logs() as logs:
        rig.update(0)
        rig.update(1)
    between = rig.trader.between
    assert isinstance(between, BetweenBars)
    spec = model_spec(config.settings.model)
    kept = between.kept
    rig.close()
    share = {k.returns.tobytes(): max(k.estimate.p_turbulent_mcse[0] / spec.mcse_max,
                                      k.estimate.vol_mcse[0] / spec.vol_mcse_max)
             for k in kept.values()}  # fmt: skip
    chains = {k.returns.tobytes(): len(k.draws) // spec.draws for k in kept.values()}
    return share, chains, [e for e in logs if e["event"] == "model.sampled"]


def test_between_bars_an_instrument_at_risk_of_the_gate_runs_on_to_its_margin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probes (regime_model.at_risk, whose verdicts and margins test_at_risk checks)
    find an instrument the next bar's gate would likely send to the bar's sampler, and the
    share of the gate its run must reach: between bars it is sampled again from the same
    carries, on until its errors are within that share or its blocks (EXTRA_BLOCKS more
    than the spec's) are spent. Here every passing instrument is made to count as at risk,
    at margins of at_risk_margin and its half taken in turn, against a worker whose probes
    run as they are."""
    config = between_bars_config(tmp_path / "config", extend_max=2)
    spec = model_spec(config.settings.model)
    _, as_is, _ = _kept_margins(config, tmp_path / "as-is")
    real = between_bars.at_risk
    given: dict[bytes, float] = {}  # each window's margin, at its last sampling

    def all_passing(sample, spec, backend):  # type: ignore[no-untyped-def]
        found = real(sample, spec, backend)
        rows = np.flatnonzero(np.asarray(sample.estimate.converged, dtype=bool))
        margin = np.where(rows % 2 == 0, spec.at_risk_margin, spec.at_risk_margin / 2)
        margin[np.isin(rows, found.rows)] = found.margin[np.isin(found.rows, rows)]
        given.update({sample.returns[i].tobytes(): m for i, m in zip(rows, margin, strict=True)})
        return Risk(rows, margin)

    real_refresh, runs = between_bars.refresh, []

    def seen(returns, starts, *args, **kwargs):  # type: ignore[no-untyped-def]
        runs.append((list(starts), kwargs.get("first_block", 0)))
        return real_refresh(returns, starts, *args, **kwargs)

    monkeypatch.setattr(between_bars, "at_risk", all_passing)
    monkeypatch.setattr(between_bars, "refresh", seen)
    share, chains, sampled = _kept_margins(config, tmp_path / "at-risk")
    assert all(e["at_risk"] > 0 for e in sampled)
    assert all(sum(e["at_risk_margins"].values()) == e["at_risk"] for e in sampled)
    assert len(sampled[1]["at_risk_margins"]) >= 2  # a run for each margin
    # the first update started cold: its instruments run on from the carries their run
    # left (run again from none, it would be a cold run), with streams of their own; the
    # second's from the carries their update started from, as its sampler did
    first, second = [r for r in runs if r[1] == AFTER_COLD_BLOCK], [r for r in runs if not r[1]]
    assert first and all(c is not None for starts, _ in first for c in starts)
    assert all(c is not None for starts, _ in second for c in starts)
    spent = spec.chains + (spec.extend_max + EXTRA_BLOCKS) * spec.extension_chains
    last = {w: m for w, m in given.items() if w in share}  # the kept samples' windows
    assert len(last) == len(share)
    assert all(share[w] <= m or chains[w] == spent for w, m in last.items())
    assert any(chains[w] > as_is[w] for w in last)  # where the gate alone stopped it
    # the halved margin asks more than the whole: a run for it ran longer
    assert any(m < spec.at_risk_margin and chains[w] > as_is[w] for w, m in last.items())


def test_an_at_risk_margin_of_1_runs_no_probes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`[model] at_risk_margin = 1` (the embedded default's, whose 2 s pace the run-on
    outran): the sample is not probed and nothing runs on past the gate."""
    probed: list[int] = []
    monkeypatch.setattr(between_bars, "at_risk", lambda *args: probed.append(1))
    config = between_bars_config(tmp_path / "config", "at_risk_margin = 1.0\n", 2)
    _, _, sampled = _kept_margins(config, tmp_path / "state")
    assert probed == [] and [e["at_risk"] for e in sampled] == [0, 0]


def test_auto_an_earlier_default_still_means_between_bars() -> None:
    """Configs written with sample_between_bars = "auto" (on where the model ran on a CPU,
    until the H200 measured this mode faster there too) keep it on, now on every backend."""
    assert between_bars_on("auto") and between_bars_on(True) and not between_bars_on(False)


def test_replay_recomputes_an_update_made_by_reweighting_bit_for_bit(tmp_path: Path) -> None:
    """Replay samples the window the update before sampled after its commit, as a
    restarted worker does, and reweighs it to the update's own: numpy's bits."""
    config = between_bars_config(tmp_path / "config")
    rig = Rig(config, tmp_path / "state")
    rig.trader.resume()
    for n in range(4):
        rig.update(n)
    rig.close()
    for seq in (2, 3, 4):
        report = replay_update(rig.store.path, config, seq, NumpyBackend())
        assert report["identical"] and report["bit_exact_required"], report
        assert report["recorded"]["between_bars"] and report["instruments"] == 3
        assert report["max_abs_diff"] == 0.0


def test_a_rotation_reweighs_each_slice_from_its_own_last_sample(tmp_path: Path) -> None:
    """With [rotation] batch_size 2 of 3 instruments each instrument's window moves by one
    or two bars between its updates: its last sample, kept across the other slices'
    updates, is reweighed over both; one that warmed up apart is sampled at its first
    bar, then reweighed."""
    settings = two_account_settings(effort=LIGHT_EFFORT + "sample_between_bars = true\n",
                                    sections="\n[rotation]\nbatch_size = 2\n")  # fmt: skip
    rig = Rig(load_config(write_config(tmp_path / "config", settings)), tmp_path / "state")
    rig.trader.resume()
    with structlog.testing.capture_logs() as logs:
        for n in range(6):
            rig.update(n)
            assert rig.trader.cold.wait_idle(120)  # a warm-up handed off is done by the next bar
    between = rig.trader.between
    rig.close()
    done = [e for e in logs if e["event"] == "update.completed"]
    assert all(e["model"]["reweighed"] + e["model"]["sampled_at_bar"] == e["modelled"]
               for e in done)  # fmt: skip
    assert sum(e["model"]["at_bar_not_moved"] for e in done) == 0  # 1 and 2 bars both fit
    # the third instrument warms up apart (model.warming), then comes to the bar once
    ready = [e["adopted_at_seq"] for e in logs if e["event"] == "model.ready"]
    assert [e["model"]["at_bar_no_draws"] for e in done if e["seq"] in ready] == [1]
    assert done[-1]["model"]["reweighed"] == 2
    assert isinstance(between, BetweenBars) and len(between.kept) == 3


def test_replay_reweighs_each_slice_from_the_sample_the_worker_reweighed(
    tmp_path: Path,
) -> None:
    """In a rotation an update reweighs samples of two earlier updates (the slices'), and
    after a restart only the last one (the others were lost with the process): each
    update's stamp names its samples, and replay takes those, bit for bit."""
    settings = two_account_settings(effort=LIGHT_EFFORT + "sample_between_bars = true\n",
                                    sections="\n[rotation]\nbatch_size = 2\n")  # fmt: skip
    config = load_config(write_config(tmp_path / "config", settings))
    first = Rig(config, tmp_path / "state")
    first.trader.resume()
    for n in range(5):
        first.update(n)
        assert first.trader.cold.wait_idle(120)
    first.close()
    again = Rig(config, tmp_path / "state")
    again.trader.resume()
    for n in (5, 6):
        again.update(n)
    served = {}
    for seq in again.store.checkpoint_seqs()[1:]:
        checkpoint = again.store.checkpoint(seq)
        assert checkpoint is not None
        served[seq] = sorted(int(k) for k in checkpoint.book[STAMP_KEY]["samples"])
    again.close()
    two = [seq for seq, used in served.items() if used == [seq - 2, seq - 1]]
    assert two and served[6] == [5]  # the slices' samples, then the restart's one
    for seq in served:
        report = replay_update(again.store.path, config, seq, NumpyBackend())
        assert report["identical"] and report["max_abs_diff"] == 0.0, report


def test_an_update_that_fails_before_its_commit_leaves_the_next_one_sound(
    tmp_path: Path,
) -> None:
    """A broker outage after the bar's reweighing: nothing is committed; the next bar's
    update samples what was pending, reweighs, commits as its seq, and the trader goes on."""
    rig = Rig(between_bars_config(tmp_path / "config"), tmp_path / "state")
    rig.trader.resume()
    rig.update(0)
    rig.update(1)
    snapshot = rig.broker.snapshot

    def outage() -> object:
        raise BrokerError("simulated outage")

    rig.broker.snapshot = outage  # type: ignore[method-assign]
    with pytest.raises(BrokerError):
        rig.update(2)
    rig.broker.snapshot = snapshot  # type: ignore[method-assign]
    with structlog.testing.capture_logs() as logs:
        rig.update(3)
        rig.update(4)
    assert rig.store.checkpoint_seqs() == [1, 2, 3, 4]
    models = [e["model"] for e in logs if e["event"] == "update.completed"]
    assert all(m["reweighed"] + m["sampled_at_bar"] == 3 for m in models)
    rig.close()


def test_a_worker_killed_once_its_sampler_ran_between_bars_resumes_to_the_same_decisions(
    tmp_path: Path,
) -> None:
    """A real worker process, SIGKILLed at `model` (between bars: after update 2's commit
    and orders, its sampler run, its chains not yet kept), starts again, samples update
    2's window once more, and makes the decisions of a run never killed."""
    config = write_config(tmp_path / "config", chaos_settings(LIGHT_EFFORT))  # auto: on
    assert run_worker_process(config, tmp_path / "straight", "alpha", 4, None) == 0
    killed = tmp_path / "killed"
    assert run_worker_process(config, killed, "alpha", 4, "kill@model:2") == -9
    assert run_worker_process(config, killed, "alpha", 4, None) == 0
    decisions = []
    for state in (tmp_path / "straight", killed):
        store = StateStore(state_path(state, "alpha"))
        decisions.append([store.decisions(seq) for seq in range(1, 5)])
        assert store.checkpoint_seqs()[-1] == 4
        checkpoint = store.checkpoint(4)
        assert checkpoint is not None and checkpoint.book[STAMP_KEY]["between_bars"]
        store.close()
    assert decisions[0] == decisions[1]
