"""Issue 12: the reloader judges each version of the file once, and the supervisor says
a rejection once per content (the daemon-level test is in test_hot_reload.py)."""

from __future__ import annotations

from pathlib import Path

from structlog.testing import capture_logs
from test_hot_reload import BASE, DEEP, SETTINGS, WITH_DIA

from service.bench.daemon_harness import write_config
from service.config_loader import load_config
from service.reload.reloader import InstrumentsReloader
from service.supervisor.supervisor import Supervisor


def test_the_reloader_judges_each_bad_content_once(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, SETTINGS, BASE))
    reloader, path = InstrumentsReloader(config), config.instruments_path
    path.write_text(DEEP)
    assert reloader.changed_and_settled() is False  # first sample: not settled yet
    assert reloader.changed_and_settled() is True
    first = reloader.check()
    assert (first.status, first.repeat) == ("rejected", False)
    assert [reloader.changed_and_settled() for _ in range(3)] == [False] * 3  # no re-poll
    assert reloader.check().repeat is True  # the watcher or SIGHUP on the same bytes
    path.write_text(BASE + "[accounts.zeta]\nsymbols = ['SPY']\n")
    assert reloader.check().repeat is False  # new bad content
    path.unlink()
    assert reloader.check().repeat is False  # unreadable: a new reason
    assert reloader.check().repeat is True
    path.write_text(WITH_DIA)
    assert reloader.check().status == "applied"
    path.write_text(DEEP)
    assert reloader.check().repeat is False  # bad again after a good one: said again


def test_the_supervisor_logs_a_rejection_once_unless_asked_by_sighup(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, SETTINGS, BASE))
    supervisor = Supervisor(config, tmp_path / "state", stop_after=None)
    config.instruments_path.write_text(DEEP)
    with capture_logs() as logs:
        for source in ("watch", "poll", "watch+poll", "sighup"):
            supervisor.reload(source)
    rejected = [e["source"] for e in logs if e["event"] == "config.rejected"]
    assert rejected == ["watch", "sighup"]
