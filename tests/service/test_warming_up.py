"""An instrument with less history than the model window is not modelled yet: it is
logged once with what is missing, and `status` shows it as warming up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import structlog
from csv_bars import START, csv_settings

from gpu_backend import select_backend
from service.config_loader import load_config
from service.model_state import InstrumentState, ModelState
from service.state.paths import state_path
from service.state.store import StateStore
from service.status import status_document
from service.status.render import render_text
from service.worker import assembly
from service.worker.trader import BarCursor, Trader
from service.worker.warmup import Warmup

WINDOW = 32
SETTINGS = csv_settings(window=WINDOW, model='chains = 2\nbackend = "numpy"\n')


def write_bars(path: Path, minutes: range) -> None:
    lines = ["time,open,high,low,close,volume"]
    for m in minutes:
        t = (START + m * timedelta(minutes=1)).isoformat().replace("+00:00", "Z")
        close = 100.0 + (m % 7) / 10
        lines.append(f"{t},{close},{close + 0.2},{close - 0.2},{close},1000")
    path.write_text("\n".join(lines) + "\n")


def test_a_short_history_is_logged_once_and_shown_by_status(tmp_path: Path) -> None:
    (tmp_path / "bars").mkdir()
    (tmp_path / "service.toml").write_text(SETTINGS)
    (tmp_path / "instruments.toml").write_text('[accounts.alpha]\nsymbols = ["SPY", "NEW"]\n')
    write_bars(tmp_path / "bars" / "SPY.csv", range(0, 60))
    write_bars(tmp_path / "bars" / "NEW.csv", range(40, 60))  # listed at minute 40
    config = load_config(tmp_path / "service.toml")
    market = assembly.build_market(config)
    first = assembly.first_trading_bar(config, market, ("SPY",))  # SPY's history decides
    cursor = BarCursor(first - market.bar_interval)
    store = StateStore(state_path(tmp_path, "alpha"))
    broker = assembly.build_broker(config, "alpha", tmp_path, market, cursor)
    trader = Trader("alpha", config, market, broker, store, select_backend("numpy"), cursor,
                    cursor)
    trader.resume()
    last = 0
    with structlog.testing.capture_logs() as logs:
        for n in range(0, 60 - WINDOW - 1, 5):
            trader.update(first + n * market.bar_interval)
            last = n
    broker.close()
    store.close()

    [short] = [e for e in logs if e["event"] == "instrument.insufficient_history"]
    assert (short["symbol"], short["bars_available"], short["bars_needed"]) == (
        "NEW", 0, WINDOW + 1)
    assert "more bars" in short["next"]
    assert all(e["modelled"] == 1 for e in logs if e["event"] == "update.completed")
    bars_seen = (first + last * market.bar_interval - START) // timedelta(minutes=1) - 40 + 1
    report = status_document(config, tmp_path, datetime.now(UTC))
    [warming] = report["accounts"][0]["warming"]
    assert (warming["symbol"], warming["bars_available"], warming["bars_needed"]) == (
        "NEW", bars_seen, WINDOW + 1)
    assert f"NEW  warming up: {bars_seen} of {WINDOW + 1} bars" in render_text(report)


def test_data_ending_before_the_first_window_is_said_at_start(tmp_path: Path) -> None:
    from service.worker.warmup import warn_if_data_ends_early  # noqa: PLC0415

    (tmp_path / "bars").mkdir()
    (tmp_path / "service.toml").write_text(SETTINGS)
    (tmp_path / "instruments.toml").write_text('[accounts.alpha]\nsymbols = ["SPY"]\n')
    write_bars(tmp_path / "bars" / "SPY.csv", range(0, 10))
    config = load_config(tmp_path / "service.toml")
    market = assembly.build_market(config)
    first = assembly.first_trading_bar(config, market, ("SPY",))
    with structlog.testing.capture_logs() as logs:
        warn_if_data_ends_early(market, ("SPY",), first, WINDOW)
    [short] = [e for e in logs if e["event"] == "instrument.insufficient_history"]
    assert (short["symbol"], short["bars_available"], short["bars_needed"]) == (
        "SPY", 10, WINDOW + 1)


def _book(*short: str, no_close: str = "", retiring: str = "") -> ModelState:
    """SPY, QQQ, IWM and GLD, each with a full window (WINDOW returns, WINDOW + 1 bars)
    but those named short (half of it), without a close yet, or retiring."""
    def state(symbol: str) -> InstrumentState:
        size = WINDOW // 2 if symbol in short else WINDOW
        return InstrumentState(symbol, returns=np.zeros(size), retiring=symbol == retiring,
                               last_close=None if symbol == no_close else 100.0)  # fmt: skip
    return ModelState({s: state(s) for s in ("SPY", "QQQ", "IWM", "GLD")})


def test_the_checkpoint_names_each_instrument_not_modelled_yet_and_why() -> None:
    warmup, none = Warmup(WINDOW), frozenset[str]()
    needed = WINDOW + 1
    assert warmup.book_entry(_book(), none) == {}  # most updates: every one is modelled
    assert warmup.book_entry(_book("QQQ"), none) == {
        "QQQ": {"bars_available": WINDOW // 2 + 1, "bars_needed": needed, "stage": "history"}}
    assert warmup.book_entry(_book(no_close="IWM"), none) == {
        "IWM": {"bars_available": 0, "bars_needed": needed, "stage": "history"}}
    assert warmup.book_entry(_book(), frozenset({"GLD"})) == {
        "GLD": {"bars_available": needed, "bars_needed": needed, "stage": "model"}}
    assert warmup.book_entry(_book("SPY", retiring="SPY"), none) == {}  # leaving: not warming
