"""Pause, resume and flatten without a daemon: the control file, the worker's trading mode,
the supervisor's watcher and the command's checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from service.cli import main
from service.control.requests import (
    RUNNING,
    ControlRequest,
    control_path,
    read_request,
    request,
    write_request,
)
from service.control.trading_mode import TradingMode, close_all
from service.control.watcher import ControlWatcher
from service.state.records import IntentRecord
from service.types import BrokerSnapshot, OrderIntent, OrderOutcome, OrderStatus, Position, Side
from service.worker.fault_points import FaultPoints
from service.worker.order_submission import OrderSubmitter

HELD = BrokerSnapshot(1000.0, 5000.0, {
    "SPY": Position("SPY", 10.0, 400.0), "QQQ": Position("QQQ", -3.0, 300.0),
    "IWM": Position("IWM", 2.0, 200.0)},
    open_orders=(OrderOutcome("rt-x-1-IWM", OrderStatus.ACCEPTED, symbol="IWM"),))
FLAT = BrokerSnapshot(5000.0, 5000.0)
BUY = OrderIntent("rt-tag-7-SPY", "SPY", Side.BUY, 1.0)


def test_a_request_is_written_atomically_and_read_back(tmp_path: Path) -> None:
    assert read_request(tmp_path, "alpha") == RUNNING  # no file: trade
    wanted = request("paused", by="ops")
    path = write_request(tmp_path, "alpha", wanted)
    assert path == control_path(tmp_path, "alpha") and read_request(tmp_path, "alpha") == wanted
    assert json.loads(path.read_text())["mode"] == "paused"
    assert [p.name for p in path.parent.iterdir()] == ["alpha.json"]  # no partial left


def test_paused_sends_nothing_and_says_so_once() -> None:
    mode = TradingMode("alpha")
    with capture_logs() as logs:
        mode.apply(request("paused", by="ops"))
        assert mode.orders([BUY], HELD, 7, "tag") == []
        assert mode.orders([BUY], HELD, 8, "tag") == []
    assert [e["event"] for e in logs] == ["control.applied", "control.paused"]
    assert logs[0]["mode"] == "paused" and logs[0]["by"] == "ops" and logs[1]["withheld"] == 1
    assert not mode.sends_unseen
    mode.apply(request("running", by="ops"))
    assert mode.orders([BUY], HELD, 9, "tag") == [BUY] and mode.sends_unseen


def test_flatten_closes_every_position_but_one_with_an_order_working() -> None:
    closes = close_all(HELD, 7, "tag")
    assert closes == [OrderIntent("rt-tag-7-SPY", "SPY", Side.SELL, 10.0),
                      OrderIntent("rt-tag-7-QQQ", "QQQ", Side.BUY, 3.0)]


def test_flatten_ends_paused_once_flat_and_rewrites_the_file(tmp_path: Path) -> None:
    asked = request("flatten", by="ops")
    write_request(tmp_path, "alpha", asked)
    mode = TradingMode("alpha", tmp_path)
    with capture_logs() as logs:
        mode.load()
        assert len(mode.orders([BUY], HELD, 7, "tag")) == 2  # the model's BUY is not sent
        assert mode.orders([BUY], FLAT, 8, "tag") == []
        assert mode.orders([BUY], HELD, 9, "tag") == []  # paused now: nothing, no line
    assert [e["event"] for e in logs] == ["control.applied", "control.flattening",
                                         "control.applied"]
    assert logs[0]["at_start"] and logs[2]["mode"] == "paused" and logs[2]["source"] == "flatten"
    on_file = read_request(tmp_path, "alpha")
    assert on_file == mode.current and on_file.mode == "paused" and on_file.by == "ops"


def test_flatten_does_not_overwrite_a_newer_request(tmp_path: Path) -> None:
    write_request(tmp_path, "alpha", request("flatten", by="ops"))
    mode = TradingMode("alpha", tmp_path)
    mode.load()
    resumed = request("running", by="lead")  # given while the flatten is under way
    write_request(tmp_path, "alpha", resumed)
    mode.orders([], FLAT, 8, "tag")
    assert read_request(tmp_path, "alpha") == resumed


class UnseenBook:
    """A store with one intent the broker never saw, and a broker that never saw it."""

    def __init__(self) -> None:
        self.recorded: list[OrderOutcome] = []
        self.sent: list[OrderIntent] = []

    def open_intents(self) -> list[IntentRecord]:
        return [IntentRecord(BUY, 7, OrderStatus.PENDING)]

    def record_outcomes(self, outcomes: list[OrderOutcome]) -> None:
        self.recorded.extend(outcomes)

    def lookup(self, client_order_id: str) -> None:
        return None

    def submit(self, intent: OrderIntent) -> OrderOutcome:
        self.sent.append(intent)
        return OrderOutcome(intent.client_order_id, OrderStatus.ACCEPTED)


@pytest.mark.parametrize("trading", [True, False])
def test_an_intent_the_broker_never_saw_is_sent_only_while_trading(trading: bool) -> None:
    book = UnseenBook()
    submitter = OrderSubmitter(book, book, FaultPoints(), lambda: False)  # type: ignore[arg-type]
    submitter.resolve_open_intents(send_unseen=trading)
    assert book.sent == ([BUY] if trading else [])
    status = OrderStatus.ACCEPTED if trading else OrderStatus.CANCELED
    assert [o.status for o in book.recorded] == [status]


def test_an_unreadable_control_file_means_paused(tmp_path: Path) -> None:
    control_path(tmp_path, "alpha").parent.mkdir()
    control_path(tmp_path, "alpha").write_text("{not json")
    mode = TradingMode("alpha", tmp_path)
    with capture_logs() as logs:
        mode.load()
    assert mode.current.mode == "paused"
    assert [e["event"] for e in logs] == ["control.invalid", "control.applied"]


def test_the_watcher_forwards_each_change_once(tmp_path: Path) -> None:
    forwarded: list[tuple[str, ControlRequest]] = []
    watcher = ControlWatcher(tmp_path, lambda a, r: forwarded.append((a, r)))
    watcher.poll(0.0, ["alpha", "beta"])
    assert forwarded == [] and watcher.paused == set()
    paused = request("paused", by="ops")
    write_request(tmp_path, "alpha", paused)
    watcher.poll(0.1, ["alpha", "beta"])  # inside the poll interval: not looked at yet
    with capture_logs() as logs:
        watcher.poll(1.0, ["alpha", "beta"])
        watcher.poll(2.0, ["alpha", "beta"])
    assert forwarded == [("alpha", paused)] and watcher.paused == {"alpha"}
    assert [(e["event"], e["account"], e["mode"]) for e in logs] == [
        ("control.applied", "alpha", "paused")]
    control_path(tmp_path, "alpha").unlink()  # no file: running again
    watcher.poll(3.0, ["alpha", "beta"])
    assert forwarded[-1] == ("alpha", RUNNING) and watcher.paused == set()


def test_the_command_writes_the_request_and_refuses_an_unknown_account(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = ["--state-dir", str(tmp_path)]
    assert main(["flatten", "alpha", *state]) == 0
    out = capsys.readouterr().out
    assert "alpha: flatten" in out and "No daemon is running" in out
    assert read_request(tmp_path, "alpha").mode == "flatten"
    assert main(["pause", "gamma", *state]) == 64
    err = capsys.readouterr().err
    assert "'gamma'" in err and "alpha, beta" in err
    assert not control_path(tmp_path, "gamma").exists()
