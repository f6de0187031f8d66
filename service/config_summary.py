"""What `status` needs of a validated configuration, in plain values.

`status` must answer fast (issue 16: 300 ms), and building the settings' pydantic models
costs more than the rest of it together. So it works from this summary, made by
`LoadedConfig.summary()` when the files are validated, or read back from
service/config_cache.py when the very same bytes were validated before. Nothing here
validates anything. Which accounts a daemon runs (its shard's, with instruments) is
decided here, for `status` and for the daemon's LoadedConfig alike.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from service.sharding import in_shard, parse_shard


@dataclass(frozen=True)
class ConfigSummary:
    accounts: tuple[str, ...]  # the settings' accounts, in their order
    instrumented: frozenset[str]  # the accounts the instruments file lists
    shard: str | None  # "I/N" (settings or --shard), None for every account
    broker_kind: str
    state_dir_setting: Path | None  # `state_dir`, absolute; None when unset
    config_hash: str

    def with_shard(self, shard: str) -> ConfigSummary:
        """As if run with `--shard`; ShardError (a ValueError) when it cannot be."""
        return replace(self, shard=str(parse_shard(shard)))

    @property
    def shard_accounts(self) -> tuple[str, ...]:
        """The accounts of this shard (all of them without one), in the settings' order."""
        return in_shard(self.accounts, None if self.shard is None else parse_shard(self.shard))

    @property
    def active_accounts(self) -> tuple[str, ...]:
        """This shard's accounts with instruments: those that get a worker."""
        return tuple(a for a in self.shard_accounts if a in self.instrumented)

    def to_json(self) -> dict[str, Any]:
        return {
            "accounts": list(self.accounts),
            "instrumented": sorted(self.instrumented),
            "shard": self.shard,
            "broker_kind": self.broker_kind,
            "state_dir_setting": None if self.state_dir_setting is None
            else str(self.state_dir_setting),
            "config_hash": self.config_hash,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ConfigSummary:
        """The summary `to_json` wrote; KeyError, TypeError or ValueError if it is not one."""
        state_dir = data["state_dir_setting"]
        return cls(
            accounts=tuple(str(a) for a in data["accounts"]),
            instrumented=frozenset(str(a) for a in data["instrumented"]),
            shard=None if data["shard"] is None else str(data["shard"]),
            broker_kind=str(data["broker_kind"]),
            state_dir_setting=None if state_dir is None else Path(state_dir),
            config_hash=str(data["config_hash"]),
        )
