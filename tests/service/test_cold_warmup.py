"""Cold work off the critical path, in process: an instrument added live warms up in the
runner's own batch while the account's warm updates go on without it, and is modelled
from the update that adopts its carry. Waits are on the runner's event, never on time."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import structlog
from conftest import FAST_INSTRUMENTS, FAST_SETTINGS
from structlog.typing import EventDict
from test_trader import Rig

from gpu_backend import NumpyBackend
from regime_model.update import InstrumentCarry, ModelSpec, refresh
from service.config_loader import LoadedConfig, load_config
from service.model_state import InstrumentState, ModelState, instrument_key
from service.status import status_document
from service.status.render import render_text
from service.worker.cold_warmup import ColdWarmup, reset_unfit_carries

# The bar's sampler (sample_between_bars off): these tests read its update.completed figures;
# warm-ups between bars: tests/service/test_between_bars.py.
SMALL = FAST_SETTINGS.replace("window = 128\nchains = 4",
                              "window = 32\nchains = 2\nsample_between_bars = false")
WITH_DIA = FAST_INSTRUMENTS.replace('"IWM"]', '"IWM", "DIA"]')
DEADLINE_S = 300.0  # generous, for a loaded 2-core machine: the wait ends at the event


def config(tmp_path: Path, instruments: str = FAST_INSTRUMENTS) -> LoadedConfig:
    (tmp_path / "instruments.toml").write_text(instruments)
    (tmp_path / "service.toml").write_text(SMALL)
    return load_config(tmp_path / "service.toml")


def named(logs: list[EventDict], event: str) -> list[EventDict]:
    return [e for e in logs if e["event"] == event]


def test_the_runner_gives_the_carry_the_update_itself_would_have_given() -> None:
    """Same seed, keys and seq as the update: warming apart changes no number."""
    spec = ModelSpec(window=32, chains=2, warmup_cold=60, draws=10)
    returns = np.random.default_rng(3).normal(0.0, 0.01, (2, 33))
    keys = np.array([instrument_key("A"), instrument_key("B")], np.uint32)
    _, warm, _ = refresh(returns[:1, :-1], [None], keys[:1], 1, 5, spec, NumpyBackend())
    _, inline, _ = refresh(returns[:, 1:], [warm[0], None], keys, 2, 5, spec, NumpyBackend())
    runner = ColdWarmup(spec, 5, NumpyBackend)
    runner.hand_off(["B"], returns[1:, 1:], 2)
    assert runner.pending() == {"B"}
    assert runner.wait_idle(DEADLINE_S)
    [done] = runner.take_done()
    assert runner.pending() == frozenset() and done.job.seq == 2 and done.iterations == 70
    for apart, together in zip(done.carries[0], inline[1], strict=True):
        assert apart.tobytes() == together.tobytes()


def test_a_live_add_warms_apart_while_the_warm_updates_go_on(tmp_path: Path) -> None:
    rig = Rig(config(tmp_path), tmp_path / "state")
    rig.trader.resume()
    with structlog.testing.capture_logs() as logs:
        rig.update(0)  # a cold start: one cold batch in the update, as before
        rig.update(1)
        (tmp_path / "instruments.toml").write_text(WITH_DIA)
        rig.trader.apply_config(load_config(tmp_path / "service.toml"))
        rig.update(2)  # hands DIA off and models the three warm ones only
        assert "DIA" in rig.trader.cold.pending()
        # that updates go on while DIA warms is shown with a held warm-up against the
        # real daemon (tests/reload/test_cold_add.py); here the adoption point is fixed
        assert rig.trader.cold.wait_idle(DEADLINE_S)
        rig.update(3)  # adopts DIA's carry first, then models all four
        rig.update(4)
    cold_start, warm, handed, *_ = named(logs, "update.completed")
    assert not named(logs[: logs.index(cold_start)], "model.warming")
    assert cold_start["modelled"] == 3 and warm["modelled"] == 3
    [warming] = named(logs, "model.warming")
    assert (warming["symbol"], warming["reason"], warming["bars"]) == ("DIA", "added live", 33)
    [ready] = named(logs, "model.ready")
    assert (ready["symbol"], ready["handed_off_at_seq"], ready["adopted_at_seq"]) == ("DIA", 3, 4)
    between = named(logs[logs.index(warming): logs.index(ready)], "update.completed")
    assert [e["seq"] for e in between] == [3]
    assert all(e["modelled"] == 3 and "DIA" in e["warming"] for e in between)
    # the hand-off update ran a warm batch: a fraction of the cold start's work (25
    # iterations against 120 at LIGHT_EFFORT, each of 3-6 gradient steps)
    assert handed["model"]["gradient_evals"] < cold_start["model"]["gradient_evals"] / 2
    after = named(logs[logs.index(ready):], "update.completed")
    assert [e["seq"] for e in after] == [4, 5]
    assert all(e["modelled"] == 4 and e["warming"] == [] for e in after)
    assert rig.trader.model_state.instruments["DIA"].carry is not None
    rig.close()


def test_status_shows_a_warm_up_in_flight_and_a_restart_starts_it_again(
    tmp_path: Path,
) -> None:
    """Nothing of a warm-up in flight is checkpointed: the restarted trader hands it off
    again, at its own seq, and loses no update."""
    state = tmp_path / "state"
    rig = Rig(config(tmp_path), state)
    rig.trader.resume()
    rig.update(0)
    (tmp_path / "instruments.toml").write_text(WITH_DIA)
    rig.trader.apply_config(load_config(tmp_path / "service.toml"))
    rig.update(1)
    assert "DIA" in rig.trader.cold.pending()
    rig.trader.close()  # the process "dies" here: the warm-up in flight is lost
    rig.close()
    report = status_document(load_config(tmp_path / "service.toml"), state, datetime.now(UTC))
    [warming] = report["accounts"][0]["warming"]
    assert (warming["symbol"], warming["stage"]) == ("DIA", "model")
    assert "DIA  warming up: model warm-up running on 33 bars" in render_text(report)

    again = Rig(config(tmp_path, WITH_DIA), state)
    assert again.trader.resume() == 2
    assert again.trader.model_state.instruments["DIA"].carry is None
    with structlog.testing.capture_logs() as logs:
        again.update(2)
        assert again.trader.cold.wait_idle(DEADLINE_S)
        again.update(3)
    [warming_again] = named(logs, "model.warming")
    assert warming_again["reason"] == "no checkpoint"
    [ready] = named(logs, "model.ready")
    assert (ready["handed_off_at_seq"], ready["adopted_at_seq"]) == (3, 4)
    assert again.store.checkpoint_seqs() == [1, 2, 3, 4]
    again.close()


def test_a_carry_no_width_of_the_model_can_start_is_dropped_and_warms_up_again() -> None:
    """A checkpoint written under another `[model] chains` or `extension_chains`: the
    instrument goes back to warming up, logged, instead of its batch being refused at
    every bar; carries of either width the model runs stay."""
    from regime_model.update import InstrumentCarry  # noqa: PLC0415

    spec = ModelSpec(chains=4, extension_chains=32)

    def carry(chains: int) -> InstrumentCarry:
        return InstrumentCarry(np.zeros((chains, 6)), np.ones(chains), np.ones(6))

    state = ModelState({s: InstrumentState(s) for s in ("SPY", "QQQ", "IWM")})
    for symbol, chains in (("SPY", 4), ("QQQ", 32), ("IWM", 8)):
        state.instruments[symbol].carry = carry(chains)
    with structlog.testing.capture_logs() as logs:
        reset_unfit_carries(state, ["SPY", "QQQ", "IWM"], spec)
    assert state.instruments["IWM"].carry is None
    assert state.instruments["SPY"].carry is not None and state.instruments["QQQ"].carry is not None
    (event,) = named(logs, "model.carry_reset")
    assert event["symbol"] == "IWM" and "position has shape (8, 6)" in event["reason"]
