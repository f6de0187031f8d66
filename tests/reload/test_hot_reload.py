"""Hot reload of the instruments file with real edits, as editors and tools make them,
against a running daemon with a real watcher."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import FAST_INSTRUMENTS, FAST_SETTINGS, DaemonProcess
from reload_rig import Rig, applied

# Reload is about the file, not the model: a small, paced model leaves the CPUs free.
SETTINGS = (
    FAST_SETTINGS.replace('mode = "fast"', 'mode = "paced"\npace_s = 0.3').replace(
        "window = 128\nchains = 4", "window = 32\nchains = 2"
    )
    + """
[[accounts]]
name = "gamma"

[reload]
quiet_ms = 300
poll_s = 1.0
"""
)

BASE = FAST_INSTRUMENTS  # alpha: SPY QQQ IWM; beta: AAPL MSFT BRK.B; gamma idle
WITH_DIA = BASE.replace('"IWM"]', '"IWM", "DIA"]')


@pytest.fixture
def rig(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path
) -> Iterator[Rig]:
    fast_config.write_text(SETTINGS)
    daemon = run_daemon("run", "--config", str(fast_config), "--state-dir", str(tmp_path / "s"))
    daemon.wait_for(lambda e: e.get("event") == "update.completed" and e["account"] == "beta")
    yield Rig(daemon, fast_config.with_name("instruments.toml"))
    daemon.signal(signal.SIGTERM)
    assert daemon.wait_exit() == 0


def test_every_way_of_saving_a_file_is_applied_once(rig: Rig) -> None:
    path, dia = rig.path, {"alpha": ["DIA"]}
    rig.expect_applied(lambda: rig.write_renamed(WITH_DIA), dia, {})
    rig.expect_applied(
        lambda: subprocess.run(["sed", "-i", 's/, "DIA"//', str(path)], check=True), {}, dia
    )
    rig.expect_applied(lambda: path.write_text(WITH_DIA), dia, {})  # truncate and rewrite
    with_gamma = WITH_DIA + '\n[accounts.gamma]\nsymbols = ["XLE"]\n'

    def append() -> None:
        with path.open("a") as handle:
            handle.write('\n[accounts.gamma]\nsymbols = ["XLE"]\n')

    gamma = rig.expect_applied(append, {"gamma": ["XLE"]}, {})
    assert gamma["accounts_added"] == ["gamma"]
    rig.daemon.wait_for(lambda e: e.get("event") == "update.completed" and e["account"] == "gamma")

    source = path.with_name("next.toml")
    source.write_text(BASE)
    rig.expect_applied(
        lambda: shutil.copyfile(source, path), {}, {"alpha": ["DIA"], "gamma": ["XLE"]}
    )

    release = path.with_name("release-2.toml")
    release.write_text(with_gamma)

    def swap_symlink() -> None:
        link = path.with_name(".instruments.link")
        link.symlink_to(release.name)
        os.replace(link, path)

    rig.expect_applied(swap_symlink, {"alpha": ["DIA"], "gamma": ["XLE"]}, {})

    def delete_then_recreate() -> None:
        path.unlink()
        path.write_text(BASE)

    rig.expect_applied(delete_then_recreate, {}, {"alpha": ["DIA"], "gamma": ["XLE"]})


def test_a_file_written_in_two_halves_is_applied_whole(rig: Rig) -> None:
    text = WITH_DIA.replace('"MSFT", ', "")  # alpha gains DIA, beta loses MSFT
    half = text.index("[accounts.beta]")  # the first half alone is valid TOML: alpha only

    def two_halves() -> None:
        with rig.path.open("w") as handle:
            handle.write(text[:half])
            handle.flush()
            threading.Event().wait(0.2)  # the scenario: a writer pausing mid-file
            handle.write(text[half:])

    rig.expect_applied(two_halves, {"alpha": ["DIA"]}, {"beta": ["MSFT"]})
    assert all("AAPL" not in str(e["removed"]) for e in applied(rig.daemon))


INVALID = [
    ("[accounts.alpha\nsymbols = [", "TOML syntax error"),
    (BASE + '\n[accounts.zeta]\nsymbols = ["SPY"]\n', "unknown account"),
    (BASE.replace('"QQQ"', '"SPY"'), "listed twice"),
    (BASE.replace('"QQQ"', '"qq q"'), "malformed symbol"),
    ("", "empty"),
    ("\x00\xff\xfe garbage \x89PNG", "TOML"),
]


def test_each_invalid_edit_is_rejected_trading_goes_on_and_the_next_valid_one_applies(
    rig: Rig,
) -> None:
    good = [WITH_DIA, BASE]
    for i, (content, words) in enumerate(INVALID):
        in_force = rig.in_force()
        rig.expect_rejected(lambda c=content: rig.write_renamed(c), words)
        seen = len(rig.daemon.named("update.completed"))
        rig.daemon.wait_for(
            lambda e, n=seen, h=in_force: (
                e.get("event") == "update.completed"
                and rig.daemon.named("update.completed").index(e) >= n
                and e["config_hash"] == h
            )
        )  # trading goes on with the last good file
        dia = {"alpha": ["DIA"]}
        added, removed = (dia, {}) if i % 2 == 0 else ({}, dia)
        rig.expect_applied(lambda g=good[i % 2]: rig.write_renamed(g), added, removed)
    rig.assert_only_good_configs_traded()


def test_a_huge_or_unreadable_file_is_rejected(rig: Rig) -> None:
    rig.expect_rejected(lambda: rig.write_renamed("# padding\n" * 5_000_000), "larger than")
    folder = rig.path.with_name("a-folder")
    folder.mkdir()

    def unreadable() -> None:
        link = rig.path.with_name(".link")
        link.symlink_to(folder.name)  # opening it fails, as an unreadable file does
        os.replace(link, rig.path)

    rig.expect_rejected(unreadable, "cannot read")
    rig.expect_applied(
        lambda: (rig.path.unlink(), rig.path.write_text(WITH_DIA)), {"alpha": ["DIA"]}, {}
    )


def test_a_burst_of_100_edits_ends_with_the_last_one_applied(rig: Rig) -> None:
    versions = [BASE, WITH_DIA, "[accounts.alpha\n"]  # valid, valid, invalid, ...
    for i in range(100):
        rig.write_renamed(versions[i % 3])
    final = WITH_DIA.replace('"BRK.B"', '"JPM"')
    rig.write_renamed(final)
    rig.daemon.wait_for(
        lambda e: e.get("event") == "config.applied" and e["added"].get("beta") == ["JPM"],
        timeout=15,
    )
    rig.assert_only_good_configs_traded()


def test_sighup_reloads_through_the_same_path_and_tells_systemd(
    run_daemon: Callable[..., DaemonProcess], fast_config: Path, tmp_path: Path
) -> None:
    fast_config.write_text(SETTINGS.replace("poll_s = 1.0", "poll_s = 3600.0\nwatch = false"))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify.sock"))
    sock.settimeout(30)
    daemon = run_daemon(
        "run",
        "--config",
        str(fast_config),
        "--state-dir",
        str(tmp_path / "s"),
        env={"NOTIFY_SOCKET": str(tmp_path / "notify.sock")},
    )
    while sock.recv(4096) != b"READY=1":
        pass
    fast_config.with_name("instruments.toml").write_text(WITH_DIA)
    daemon.signal(signal.SIGHUP)
    event = daemon.wait_for(lambda e: e.get("event") == "config.applied")
    assert event["source"] == "sighup" and event["added"] == {"alpha": ["DIA"]}
    messages = [sock.recv(4096).decode() for _ in range(2)]
    while "READY=1" not in messages[-1]:
        messages.append(sock.recv(4096).decode())
    reloading = next(m for m in messages if m.startswith("RELOADING=1"))
    assert "MONOTONIC_USEC=" in reloading
    assert messages.index(reloading) < len(messages) - 1
    daemon.wait_for(
        lambda e: (
            e.get("event") == "update.completed"
            and e["account"] == "alpha"
            and e["instruments"] == 4
        )
    )
    daemon.signal(signal.SIGTERM)
    assert daemon.wait_exit() == 0
    sock.close()


def test_a_removed_account_closes_out_and_stops_and_a_restart_uses_the_current_file(
    rig: Rig,
) -> None:
    beta = rig.daemon.named("worker.started", account="beta")[0]["pid"]
    alpha_only = BASE[: BASE.index("[accounts.beta]")]
    rig.expect_applied(
        lambda: rig.write_renamed(alpha_only), {}, {"beta": ["AAPL", "BRK.B", "MSFT"]}
    )
    stopped = rig.daemon.wait_for(
        lambda e: e.get("event") == "worker.stopping" and e.get("account") == "beta"
    )
    assert stopped["reason"] == "account removed from the instruments file"
    exited = rig.daemon.wait_for(
        lambda e: e.get("event") == "worker.exited" and e.get("account") == "beta"
    )
    assert exited["exit_code"] == 0 and not rig.daemon.named("worker.restarted", account="beta")
    assert stopped["pid"] == beta

    # A worker that dies now is restarted on the file in force, not the one it began with.
    in_force = rig.in_force()
    alpha = rig.daemon.named("update.completed", account="alpha")[-1]["pid"]
    os.kill(alpha, signal.SIGKILL)
    replaced = rig.daemon.wait_for(
        lambda e: (
            e.get("event") == "update.completed"
            and e.get("account") == "alpha"
            and e["pid"] != alpha
        )
    )
    assert replaced["config_hash"] == in_force


DEEP = "[accounts.alpha]\nsymbols = " + "[" * 900 + "]" * 900 + "\n"


def wait_trading_on(rig: Rig, config_hash: str, updates: int) -> None:
    """Wait for `updates` more of alpha's updates on `config_hash` (several polls' time)."""
    def count() -> int:
        done = rig.daemon.named("update.completed", account="alpha")
        return sum(e["config_hash"] == config_hash for e in done)

    target = count() + updates
    rig.daemon.wait_for(lambda e: count() >= target)


def test_a_deeply_nested_file_is_refused_once_per_content_and_trading_goes_on(
    rig: Rig,
) -> None:
    in_force = rig.in_force()
    rig.expect_rejected(lambda: rig.write_renamed(DEEP), "nested")
    wait_trading_on(rig, in_force, 10)  # 10 paced updates: about three hash polls
    assert len(rig.daemon.named("config.rejected")) == 1
    rig.expect_rejected(lambda: rig.write_renamed(DEEP + "# another\n"), "nested")
    wait_trading_on(rig, in_force, 10)
    assert len(rig.daemon.named("config.rejected")) == 2
    rig.expect_applied(lambda: rig.write_renamed(WITH_DIA), {"alpha": ["DIA"]}, {})
    rig.assert_only_good_configs_traded()
    # The fixture then sends SIGTERM and requires exit 0.
