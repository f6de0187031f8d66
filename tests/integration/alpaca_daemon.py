"""The daemon against the local Alpaca-compatible server: its configuration and checks."""

from __future__ import annotations

from pathlib import Path

from alpaca_server import AlpacaServer

from service.bench.daemon_harness import LIGHT_EFFORT
from service.state.store import StateStore

SETTINGS = """
instruments_file = "instruments.toml"

[[accounts]]
name = "alpha"

[market]
kind = "alpaca"
interval = "1m"

[market.alpaca]
url_override = "{url}"
replay_start = "2026-01-05T14:30:00Z"

[clock]
mode = "fast"

[broker]
kind = "alpaca"
reconcile_every = 5

[broker.alpaca]
url_override = "{url}"
trade_when_closed = false  # the default: the clock endpoint (New York time) is read

[broker.alpaca.http]
timeout_s = 0.3
backoff_s = 0.01
max_backoff_s = 0.05
requests_per_minute = 100000

[model]
window = 32
chains = 2
backend = "numpy"
extend_max = 0  # orders and faults are under test here, not the model's effort
{effort}
[logging]
format = "json"

[supervision]
backoff_initial_s = 0.05
restart_intensity = 50
"""

INSTRUMENTS = """
[accounts.alpha]
symbols = ["SPY", "QQQ"]
"""


def write_config(folder: Path, server: AlpacaServer) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "instruments.toml").write_text(INSTRUMENTS)
    path = folder / "service.toml"
    path.write_text(SETTINGS.format(url=server.url, effort=LIGHT_EFFORT))
    return path


def key_env(server: AlpacaServer, keys: tuple[str, str] | None = None) -> dict[str, str]:
    key_id, secret = keys or server.keys
    return {"REGIME_TRADER_ALPHA_KEY_ID": key_id, "REGIME_TRADER_ALPHA_SECRET": secret}


def intents(state: Path) -> list[tuple[str, str, str, float, str]]:
    store = StateStore(state / "alpha.sqlite")
    try:
        return store.intents()
    finally:
        store.close()


Intent = tuple[str, str, str, float, str]


def assert_exactly_once(server: AlpacaServer, state: Path) -> list[Intent]:
    """Every intent the daemon made reached the server once (or was refused), none was
    lost, and the server holds no order the daemon did not intend."""
    made = intents(state)
    ids = [cid for cid, *_ in made]
    assert len(ids) == len(set(ids))
    assert all(n == 1 for n in server.account.accepted.values())
    assert set(server.account.accepted) <= set(ids), "an order nobody intended"
    for cid, _symbol, _side, _qty, status in made:
        if status == "rejected":
            assert cid not in server.account.accepted
        else:
            assert server.account.accepted.get(cid) == 1, f"{cid} ({status}) was lost"
    return made


def key_pieces(*keys: str, size: int = 6) -> set[str]:
    """Every `size`-character piece of the keys: none may be written anywhere."""
    return {k[i:i + size] for k in keys for i in range(len(k) - size + 1)}
