"""Pause, resume and flatten on a real daemon (simulated market and broker, one account),
and an alert posted by a real daemon to a webhook on 127.0.0.1. Waits are on the
daemon's log events and the server's queue, with deadlines; no sleeps."""

from __future__ import annotations

import json
import queue
import signal
import sqlite3
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import DaemonProcess, Event

from service.bench.daemon_harness import LIGHT_EFFORT, write_config
from service.cli import main

ONE_ACCOUNT = """
[accounts.alpha]
symbols = ["SPY", "QQQ", "IWM"]
"""


def settings(sections: str = "") -> str:
    return f"""
instruments_file = "instruments.toml"

[[accounts]]
name = "alpha"

[clock]
mode = "paced"
pace_s = 0.25

[model]
window = 128
chains = 4
backend = "numpy"
extend_max = 0
{LIGHT_EFFORT}
[strategy]
# invested unless turbulence is all but certain, so that there is soon something to
# flatten, and something to buy after a resume from flat (once an estimate converges);
# once in, never out by the model (P <= 1 always), so only the flatten empties the book
enter_below = 0.98
exit_above = 1.0
unconverged_exposure = 1.0  # no halving down to nothing before the flatten

[logging]
format = "json"
{sections}"""


def worker_event(name: str, **fields: Any) -> Callable[[Event], bool]:
    """An event about account alpha, with these fields."""
    def match(e: Event) -> bool:
        return (e.get("event") == name and e.get("account") == "alpha"
                and all(e.get(k) == v for k, v in fields.items()))
    return match


def position(daemon: DaemonProcess, event: Event) -> int:
    return next(i for i, e in enumerate(daemon.events) if e is event)


def wait_after(daemon: DaemonProcess, start: int, predicate: Callable[[Event], bool],
               n: int = 1, timeout: float = 30.0) -> int:
    """The index of the n-th event after index `start` that matches `predicate`."""
    def nth(e: Event) -> bool:
        if not predicate(e):
            return False
        at = position(daemon, e)
        return at > start and sum(map(predicate, daemon.events[start + 1:at + 1])) >= n
    return position(daemon, daemon.wait_for(nth, timeout))


def control(command: str, config: Path, state: Path) -> None:
    assert main([command, "alpha", "--config", str(config), "--state-dir", str(state)]) == 0


def applied(mode: str, **fields: Any) -> Callable[[Event], bool]:
    """The worker's control.applied (the supervisor's has no `at_start`)."""
    worker = worker_event("control.applied", mode=mode, **fields)
    return lambda e: worker(e) and "at_start" in e


def positions(state: Path) -> dict[str, float]:
    uri = f"file:{state / 'alpha.sim-broker.sqlite'}?mode=ro"
    with sqlite3.connect(uri, uri=True) as book:
        return {s: q for s, q in book.execute("SELECT symbol, qty FROM positions") if q}


def test_pause_flatten_resume_and_a_pause_that_outlives_a_restart(
    run_daemon: Callable[..., DaemonProcess], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, state = write_config(tmp_path / "config", settings(), ONE_ACCOUNT), tmp_path / "s"
    daemon = run_daemon("run", "--config", str(config), "--state-dir", str(state))
    daemon.wait_for(worker_event("order.submitted"))  # it holds something to flatten
    control("pause", config, state)
    assert "The daemon (pid " in capsys.readouterr().out
    paused = wait_after(daemon, 0, applied("paused"))
    wait_after(daemon, paused, worker_event("update.completed"), n=2)
    after_pause = daemon.events[paused:]
    assert all(e["orders"] == 0 for e in after_pause if worker_event("update.completed")(e))
    assert not [e for e in after_pause if worker_event("order.submitted")(e)]
    assert [e for e in after_pause if worker_event("control.paused")(e)]

    assert positions(state), daemon.report("nothing held to flatten")
    control("flatten", config, state)
    flatten = wait_after(daemon, paused, applied("flatten"))
    done = wait_after(daemon, flatten, applied("paused", source="flatten"))
    sells = [e for e in daemon.events[flatten:done] if worker_event("order.submitted")(e)]
    assert sells and {e["side"] for e in sells} == {"sell"}, daemon.report("no closes")
    assert positions(state) == {}, daemon.report("not flat")

    control("resume", config, state)
    resumed = wait_after(daemon, done, applied("running"))
    wait_after(daemon, resumed, worker_event("order.submitted", side="buy"))

    control("pause", config, state)
    wait_after(daemon, resumed, applied("paused"))
    daemon.signal(signal.SIGTERM)
    assert daemon.wait_exit() == 0, daemon.report("bad exit")
    assert daemon.named("control.applied", account="alpha", mode="flatten")[0].keys() >= {
        "by", "requested_at", "source"}

    again = run_daemon("run", "--config", str(config), "--state-dir", str(state),
                       "--stop-after", "2")
    assert again.wait_exit() == 0, again.report("bad exit")
    assert again.named("control.applied", account="alpha", mode="paused", at_start=True)
    assert [u["orders"] for u in again.named("update.completed")] == [0, 0]
    assert not again.named("order.submitted")


class Hook(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.received: queue.Queue[dict[str, Any]] = queue.Queue()


class Handler(BaseHTTPRequestHandler):
    server: Hook

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.received.put(json.loads(body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def hook() -> Iterator[Hook]:
    server = Hook()
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_a_parked_account_is_posted_to_the_webhook(
    run_daemon: Callable[..., DaemonProcess], tmp_path: Path, hook: Hook
) -> None:
    url = f"http://127.0.0.1:{hook.server_address[1]}/hook/secret-token"
    config = write_config(tmp_path / "config", settings(f'[alerts]\nwebhook = "{url}"\n'),
                          ONE_ACCOUNT)
    state = tmp_path / "s"
    state.mkdir()
    (state / "alpha.sqlite").write_bytes(b"this is not a database" * 100)
    daemon = run_daemon("run", "--config", str(config), "--state-dir", str(state))
    message = hook.received.get(timeout=60)
    assert message["kind"] == "parked" and message["account"] == "alpha"
    assert message["details"]["cause"]["event"] == "state.unusable"
    assert message["text"].startswith("regime-trader: alpha is parked")
    assert daemon.wait_exit() == 78, daemon.report("bad exit")
    [sent] = daemon.named("alert.sent", kind="parked")
    assert sent["host"] == f"127.0.0.1:{hook.server_address[1]}"
    assert not [line for line in map(json.dumps, daemon.events) if "secret-token" in line]

