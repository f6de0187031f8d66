"""The hot-reload tests' rig: a running daemon and its instruments file, with the
edits and the expectations those tests make."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from conftest import DaemonProcess, Event


def applied(daemon: DaemonProcess) -> list[Event]:
    return daemon.named("config.applied")


class Rig:
    def __init__(self, daemon: DaemonProcess, path: Path) -> None:
        self.daemon, self.path = daemon, path

    def expect_applied(
        self, edit: Callable[[], None], added: dict[str, list[str]], removed: dict[str, list[str]]
    ) -> Event:
        """Make the edit; exactly one new config.applied follows, with these sets."""
        before = len(applied(self.daemon))
        started = datetime.now(UTC)
        edit()
        event = self.daemon.wait_for(
            lambda e: (
                e.get("event") == "config.applied" and applied(self.daemon).index(e) >= before
            ),
            timeout=15,
        )
        assert (event["added"], event["removed"]) == (added, removed)
        lag = (datetime.fromisoformat(event["timestamp"]) - started).total_seconds()
        assert lag < 2.0, f"applied {lag:.2f}s after the edit"
        return event

    def expect_rejected(self, edit: Callable[[], None], words: str) -> Event:
        before = len(self.daemon.named("config.rejected"))
        edit()
        event = self.daemon.wait_for(
            lambda e: (
                e.get("event") == "config.rejected"
                and self.daemon.named("config.rejected").index(e) >= before
            ),
            timeout=15,
        )
        assert words in " ".join(event["errors"]), event["errors"]
        return event

    def in_force(self) -> str:
        """The config hash of the last file applied (or the one the daemon started with)."""
        changes = applied(self.daemon)
        return str(
            changes[-1]["config_hash"]
            if changes
            else self.daemon.named("update.completed")[0]["config_hash"]
        )

    def assert_only_good_configs_traded(self) -> None:
        good = {e["config_hash"] for e in applied(self.daemon)}
        good.add(self.daemon.named("update.completed")[0]["config_hash"])
        assert {e["config_hash"] for e in self.daemon.named("update.completed")} <= good

    def write_renamed(self, text: str) -> None:
        tmp = self.path.with_name(".instruments.toml.swp")
        tmp.write_text(text)
        os.replace(tmp, self.path)
