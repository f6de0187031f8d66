"""One account's update cycle, in process: rotation, catching up, resuming, orders."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import structlog
from conftest import FAST_INSTRUMENTS, FAST_SETTINGS

from gpu_backend import select_backend
from service.broker.base import Broker
from service.config_loader import LoadedConfig, load_config
from service.state.store import StateStore
from service.types import BrokerSnapshot, OrderIntent, OrderOutcome
from service.worker import assembly
from service.worker.trader import BarCursor, Trader


def make_config(tmp_path: Path, extra: str = "") -> LoadedConfig:
    (tmp_path / "instruments.toml").write_text(FAST_INSTRUMENTS)
    (tmp_path / "service.toml").write_text(FAST_SETTINGS + extra)
    return load_config(tmp_path / "service.toml")


class Rig:
    """A trader on the synthetic market and the simulated broker, driven bar by bar."""

    def __init__(self, config: LoadedConfig, state: Path) -> None:
        self.market = assembly.build_market(config)
        self.first = assembly.first_trading_bar(config, self.market, ("SPY",))
        self.cursor = BarCursor(self.first - self.market.bar_interval)
        self.store = StateStore(assembly.state_path(state, "alpha"))
        self.broker = assembly.build_broker(config, "alpha", state, self.market, self.cursor)
        self.trader = Trader(
            "alpha",
            config,
            self.market,
            self.broker,
            self.store,
            select_backend("numpy"),
            self.cursor,
            self.cursor,
        )

    def bar(self, n: int) -> datetime:
        return self.first + n * self.market.bar_interval

    def update(self, n: int) -> None:
        """Bar n's update, then the sampler between bars where it runs (the worker loop's
        two steps: service/worker/process.py)."""
        self.trader.update(self.bar(n))
        self.trader.sample_between_bars()

    def close(self) -> None:
        self.broker.close()
        self.store.close()

    def log_with_latest_seq(self) -> list[tuple[str, int | None, dict[str, Any]]]:
        """From now on every event logged in this process, as (name, the seq of the newest
        checkpoint committed when it was logged, the event); the autouse fixture puts the
        logging configuration back after the test."""
        seen: list[tuple[str, int | None, dict[str, Any]]] = []

        def note(_: object, __: str, event: dict[str, Any]) -> dict[str, Any]:
            latest = self.store.latest()
            seen.append((event["event"], latest.seq if latest else None, event))
            raise structlog.DropEvent

        structlog.configure(processors=[note])
        return seen


def test_a_late_update_takes_every_bar_that_arrived_meanwhile(tmp_path: Path) -> None:
    rig = Rig(make_config(tmp_path), tmp_path / "state")
    rig.trader.resume()
    rig.update(0)
    with structlog.testing.capture_logs() as logs:
        rig.update(5)  # bars 1-5 arrived while we were busy
    [done] = [e for e in logs if e["event"] == "update.completed"]
    assert done["new_bars"] == 5 * 3  # five bars for each of three symbols
    state = rig.trader.model_state.instruments["SPY"]
    assert state.last_bar_time == rig.bar(5) and state.returns.size == 128
    rig.close()


def test_rotation_slices_update_in_turn_and_none_is_starved(tmp_path: Path) -> None:
    rig = Rig(make_config(tmp_path, "\n[rotation]\nbatch_size = 2\n"), tmp_path / "state")
    rig.trader.resume()
    with structlog.testing.capture_logs() as logs:
        for n in range(3):
            rig.update(n)
    assert [e["instruments"] for e in logs if e["event"] == "update.completed"] == [2, 2, 2]
    last_bars = {s: st.last_bar_time for s, st in rig.trader.model_state.instruments.items()}
    # SPY, QQQ at bar 0; IWM, SPY at bar 1; QQQ, IWM at bar 2: each came round twice
    assert last_bars == {"SPY": rig.bar(1), "QQQ": rig.bar(2), "IWM": rig.bar(2)}
    rig.close()


def test_a_resumed_trader_continues_from_its_checkpoint(tmp_path: Path) -> None:
    config, state = make_config(tmp_path), tmp_path / "state"
    rig = Rig(config, state)
    rig.trader.resume()
    for n in range(3):
        rig.update(n)
    before = {s: st.returns.copy() for s, st in rig.trader.model_state.instruments.items()}
    rig.close()

    again = Rig(config, state)
    assert again.trader.resume() == 3
    assert again.trader.last_bar_time == again.bar(2)
    for symbol, returns in before.items():
        assert (again.trader.model_state.instruments[symbol].returns == returns).all()
    again.update(3)
    assert again.store.checkpoint_seqs() == [1, 2, 3, 4]
    again.close()


class Crash(BaseException):
    """Stands for the process dying at that point (nothing after it runs)."""


class CrashingBroker:
    """The real simulated broker, with the process 'dying' just before or just after the
    first order reaches it."""

    def __init__(self, inner: Broker, after_post: bool) -> None:
        self.inner, self.after_post = inner, after_post

    def snapshot(self) -> BrokerSnapshot:
        return self.inner.snapshot()

    def lookup(self, client_order_id: str) -> OrderOutcome | None:
        return self.inner.lookup(client_order_id)

    def submit(self, intent: OrderIntent) -> OrderOutcome:
        if self.after_post:
            self.inner.submit(intent)
        raise Crash

    def cancel(self, broker_order_id: str) -> None:
        self.inner.cancel(broker_order_id)

    def market_open(self) -> bool:
        return self.inner.market_open()

    def close(self) -> None:
        self.inner.close()


@pytest.mark.parametrize("after_post", [False, True], ids=["before-post", "after-post"])
def test_an_order_interrupted_by_a_crash_reaches_the_broker_exactly_once(
    tmp_path: Path, after_post: bool
) -> None:
    config, state = make_config(tmp_path), tmp_path / "state"
    rig = Rig(config, state)
    rig.trader.broker = CrashingBroker(rig.broker, after_post)
    rig.trader.resume()
    with pytest.raises(Crash):  # the first update that trades dies at its first order
        for n in range(20):
            rig.update(n)
    crashed_seq = rig.trader.seq + 1
    [pending] = [i for i in rig.store.intents() if i[4] == "pending"][:1]
    rig.close()

    again = Rig(config, state)
    assert again.trader.resume() == crashed_seq  # the checkpoint was durable before the POST
    outcome = again.broker.lookup(pending[0])
    assert outcome is not None and outcome.status.value in ("accepted", "filled")
    intents = again.store.intents()
    assert all(status != "pending" for *_, status in intents)
    orders = again.broker.snapshot().open_orders
    assert len(orders) == len(intents)  # one order per intent, none twice
    again.close()


def held(rig: Rig) -> dict[str, float]:
    return {s: p.qty for s, p in rig.broker.snapshot().positions.items() if p.qty}


def test_a_removed_instrument_is_sold_then_forgotten_and_an_added_one_starts_cold(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path)
    rig = Rig(config, tmp_path / "state")
    rig.trader.resume()
    n = 0
    while not held(rig) and n < 30:  # trade until something is held
        rig.update(n)
        n += 1
    symbol = next(iter(held(rig)))
    others = [*(s for s in rig.trader.symbols if s != symbol), "DIA"]
    text = FAST_INSTRUMENTS.replace(
        str(list(rig.trader.symbols)).replace("'", '"'), str(others).replace("'", '"')
    )
    (tmp_path / "instruments.toml").write_text(text)
    before = len(rig.store.intents())
    with structlog.testing.capture_logs() as logs:
        rig.trader.apply_config(load_config(tmp_path / "service.toml"))
        rig.update(n)
        rig.update(n + 1)  # the sale fills at this bar's open; the symbol is then flat
        rig.update(n + 2)
    [applied] = [e for e in logs if e["event"] == "instruments.applied"]
    assert (applied["added"], applied["removed"]) == (["DIA"], [symbol])
    mine = [i for i in rig.store.intents() if i[1] == symbol]
    bought = sum(i[3] for i in mine if i[2] == "buy" and i[4] == "filled")
    sold = sum(i[3] for i in mine if i[2] == "sell" and i[4] == "filled")
    # Everything bought is sold, nothing more: a buy still pending when the position was
    # read and a sale the strategy had already made (an unconverged update halves the
    # target) included; the removal itself is one sale.
    assert sold == bought, "the whole position is sold"
    removal = [i for i in rig.store.intents()[before:] if i[1] == symbol]
    assert [i[2] for i in removal] == ["sell"]
    assert symbol not in held(rig)
    assert symbol not in rig.trader.model_state.instruments
    assert any(e["event"] == "instruments.retired" and symbol in e["symbols"] for e in logs)
    assert rig.trader.model_state.instruments["DIA"].returns.size == 128  # history fetched
    rig.close()


def test_carries_of_another_model_width_are_reset_at_resume(tmp_path: Path) -> None:
    """Restarted with `[model] chains` changed: the checkpoint's carries fit no width the
    model now runs, so each instrument warms up again (`model.carry_reset`) instead of
    the update refusing its batch."""
    state = tmp_path / "state"
    at_bar = FAST_SETTINGS.replace("chains = 4", "chains = 4\nsample_between_bars = false")
    (tmp_path / "instruments.toml").write_text(FAST_INSTRUMENTS)
    (tmp_path / "service.toml").write_text(at_bar)  # checkpoint 1 holds update 1's carries
    rig = Rig(load_config(tmp_path / "service.toml"), state)
    rig.trader.resume()
    rig.update(0)
    rig.close()
    (tmp_path / "service.toml").write_text(at_bar.replace("chains = 4", "chains = 2"))
    again = Rig(load_config(tmp_path / "service.toml"), state)
    with structlog.testing.capture_logs() as logs:
        again.trader.resume()
    reset = sorted(e["symbol"] for e in logs if e["event"] == "model.carry_reset")
    assert reset == sorted(again.trader.model_state.instruments)
    assert all(st.carry is None for st in again.trader.model_state.instruments.values())
    again.close()
