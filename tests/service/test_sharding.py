"""Sharding the accounts (service/sharding.py): a stable, balanced, minimally moving hash;
`--shard I/N` and `shard = "I/N"` where the accounts are decided, at start and on reload;
`regime-trader shards`, `bench reshard`, and one real daemon running half the accounts."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import DaemonProcess

from service.bench.daemon_harness import (
    TWO_ACCOUNT_INSTRUMENTS,
    two_account_settings,
    write_config,
)
from service.bench.reshard import parse_span, simulate, table_lines
from service.cli import main
from service.config_loader import ConfigError, load_config
from service.exit_codes import EX_CONFIG
from service.reload.reloader import InstrumentsReloader
from service.sharding import (
    Shard,
    ShardError,
    account_key,
    assign,
    fewest_moves,
    in_shard,
    jump_hash,
    moves,
    parse_shard,
    shard_of,
)
from service.state.paths import state_path

NAMES = [f"acct-{i:04d}" for i in range(5000)]
# gamma and delta: shard 0 of 2 runs alpha, beta and gamma; shard 1 runs delta alone.
FOUR_ACCOUNTS = two_account_settings(
    sections='\n[[accounts]]\nname = "gamma"\n\n[[accounts]]\nname = "delta"\n')
FOUR_INSTRUMENTS = TWO_ACCOUNT_INSTRUMENTS + """
[accounts.gamma]
symbols = ["TLT", "GLD"]

[accounts.delta]
symbols = ["XLE", "XLF"]
"""


# -- the hash ---------------------------------------------------------------------------


def test_jump_hash_gives_the_published_reference_values() -> None:
    # The reference implementation's own test vectors (key, buckets) -> bucket.
    cases = {(1, 1): 0, (42, 57): 43, (0xDEAD10CC, 1): 0, (0xDEAD10CC, 666): 361,
             (256, 1024): 520}  # fmt: skip
    assert {case: jump_hash(*case) for case in cases} == cases


def test_an_account_s_key_and_shards_are_pinned_not_salted() -> None:
    """The first 8 bytes of SHA-256 of the UTF-8 name, big-endian: the same on every host
    and in every process (Python's hash() of a str is salted per process)."""
    for name in ("alpha", "beta", "ünïcode-name"):
        digest = hashlib.sha256(name.encode("utf-8")).digest()
        assert account_key(name) == int.from_bytes(digest[:8], "big")
    assert account_key("alpha") == 0x8ED3F6AD685B959E
    pinned = {"alpha": [0, 0, 2, 2, 2, 2, 2, 2], "beta": [0, 0, 0, 3, 3, 3, 3, 3],
              "gamma": [0, 0, 0, 3, 3, 5, 6, 7], "delta": [0, 1, 1, 1, 1, 1, 1, 1]}  # fmt: skip
    assert {name: [shard_of(name, n) for n in range(1, 9)] for name in pinned} == pinned


def test_the_shards_are_balanced() -> None:
    for n in (2, 3, 5, 8, 10):
        sizes = [len(names) for names in assign(NAMES, n)]
        expected = len(NAMES) / n
        # A binomial's sd is under sqrt(expected): 4 sd either way.
        assert all(abs(size - expected) < 4 * expected**0.5 for size in sizes), (n, sizes)


def test_n_to_n_plus_1_moves_only_the_new_shard_s_share_and_only_into_it() -> None:
    for n in range(1, 12):
        moved = moves(NAMES, n, n + 1)
        assert {m.target for m in moved} == {n}  # never between old shards
        assert all(m.source == shard_of(m.account, n) for m in moved)
        share = len(NAMES) / (n + 1)
        assert abs(len(moved) - share) < 4 * share**0.5, (n, len(moved))


def test_each_account_keeps_its_shard_or_jumps_to_the_newest_as_n_grows() -> None:
    """Consistency, checked for every count: shard_of(a, n + 1) is shard_of(a, n) or n."""
    for name in NAMES[:500]:
        shards = [shard_of(name, n) for n in range(1, 41)]
        steps = enumerate(itertools.pairwise(shards), start=1)
        assert all(after in (before, n) for n, (before, after) in steps), name


def test_fewest_moves_is_the_share_of_the_shards_added_or_removed() -> None:
    assert fewest_moves(1000, 1, 2) == 500
    assert fewest_moves(1000, 2, 3) == 334  # ceil(1000 / 3)
    assert fewest_moves(1000, 4, 2) == 500  # shrinking: the removed shards' accounts


# -- the shard: parsing, settings, the command line --------------------------------------


@pytest.mark.parametrize(("text", "message"), [
    ("3/3", "the index must be 0..2"),
    ("1/1", "the index must be 0"),
    ("0/0", "the number of shards must be 1..1000"),
    ("0/1001", "the number of shards must be 1..1000"),
    ("1", "must be I/N"), ("a/3", "must be I/N"), ("-1/3", "must be I/N"),
    ("1/3/4", "must be I/N"), ("", "must be I/N"), ("1/3\n1", "must be I/N"),
])  # fmt: skip
def test_a_shard_that_cannot_be_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ShardError, match=f"^{message}"):
        parse_shard(text)


def test_a_shard_is_read_with_spaces_and_leading_zeros() -> None:
    assert parse_shard(" 02/3 ") == Shard(2, 3)
    assert str(Shard(2, 3)) == "2/3"
    assert in_shard(["alpha", "beta"], None) == ("alpha", "beta")


def test_the_settings_shard_selects_the_accounts_and_a_bad_one_names_the_key(
    tmp_path: Path,
) -> None:
    path = write_config(tmp_path, 'shard = "01/2"\n' + FOUR_ACCOUNTS, FOUR_INSTRUMENTS)
    config = load_config(path)
    assert config.settings.shard == "1/2"
    assert (config.shard_accounts, config.active_accounts) == (("delta",), ("delta",))
    assert config.with_shard("0/2").active_accounts == ("alpha", "beta", "gamma")  # flag wins
    path.write_text('shard = "2/2"\n' + FOUR_ACCOUNTS)
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    (problem,) = raised.value.problems
    assert problem.key == "shard" and "the index must be 0..1" in problem.message


def test_check_config_refuses_a_bad_or_empty_shard_with_78(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config(tmp_path, FOUR_ACCOUNTS, FOUR_INSTRUMENTS)
    assert main(["check-config", "--config", str(path), "--shard", "3/3"]) == EX_CONFIG
    assert "error: --shard 3/3: the index must be 0..2" in capsys.readouterr().err
    # Of 4 accounts in 4 shards, shard 0 has none (alpha 2, beta 3, gamma 3, delta 1).
    assert main(["check-config", "--config", str(path), "--shard", "0/4"]) == EX_CONFIG
    assert "shard 0/4: none of the 4 accounts falls in it" in capsys.readouterr().err
    assert main(["check-config", "--config", str(path), "--shard", "1/2"]) == 0


def test_a_reload_starts_an_added_account_only_in_its_shard(tmp_path: Path) -> None:
    path = write_config(tmp_path, FOUR_ACCOUNTS, TWO_ACCOUNT_INSTRUMENTS)
    shard_0, shard_1 = (load_config(path).with_shard(s) for s in ("0/2", "1/2"))
    assert (shard_0.active_accounts, shard_1.active_accounts) == (("alpha", "beta"), ())
    (tmp_path / "instruments.toml").write_text(FOUR_INSTRUMENTS)
    outcome_0 = InstrumentsReloader(shard_0).check()
    outcome_1 = InstrumentsReloader(shard_1).check()
    assert (set(outcome_0.added), outcome_0.config.active_accounts) == (
        {"gamma"}, ("alpha", "beta", "gamma"))
    assert (set(outcome_1.added), outcome_1.config.active_accounts) == ({"delta"}, ("delta",))


# -- the operator's tools ----------------------------------------------------------------


def test_shards_lists_each_shard_and_who_moves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_config(tmp_path, FOUR_ACCOUNTS, FOUR_INSTRUMENTS)
    assert main(["shards", "--count", "2", "--to", "3", "--config", str(path), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [s["accounts"] for s in document["shards"]] == [["alpha", "beta", "gamma"], ["delta"]]
    to = document["to"]
    assert to["moves"] == [{"account": "alpha", "from": "0/2", "to": "2/3"}]
    assert (to["moved"], to["fewest_possible"]) == (1, 2)
    assert main(["shards", "--count", "4", "--config", str(path)]) == 0
    text = capsys.readouterr().out
    assert "0/4: no account: `run --shard 0/4` refuses to start" in text
    assert "3/4: 2 accounts: beta gamma" in text


def test_bench_reshard_counts_moves_against_mod_n_and_the_fewest() -> None:
    document = simulate(1000, 1, 4)
    rows = {row["from"]: row for row in document["rows"]}
    assert list(rows) == [1, 2, 3, 4]
    assert all(row["jump_moved_elsewhere"] == 0 for row in rows.values())
    assert all(rows[n]["mod_moves"] > 2 * rows[n]["jump_moves"] for n in (2, 3, 4))
    assert [rows[n]["fewest_moves"] for n in rows] == [500, 334, 250, 200]
    assert sum(1 for line in table_lines(document) if line.startswith("| ")) == 1 + 4
    assert parse_span("3") == (3, 3) and parse_span("1..10") == (1, 10)
    with pytest.raises(ValueError, match=r"write N or A\.\.B"):
        parse_span("1-10")


# -- the real daemon --------------------------------------------------------------------


def test_the_daemon_runs_only_its_shard_s_accounts(
    tmp_path: Path, run_daemon: Callable[..., DaemonProcess], capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path / "config", FOUR_ACCOUNTS, FOUR_INSTRUMENTS)
    state = tmp_path / "state"
    daemon = run_daemon("run", "--config", str(config), "--state-dir", str(state),
                        "--shard", "1/2", "--stop-after", "1")
    assert daemon.wait_exit(60) == 0, daemon.report("run --shard 1/2")
    (event,) = daemon.named("shard.accounts")
    assert (event["shard"], event["accounts"], event["skipped"]) == ("1/2", ["delta"], 3)
    updated = Counter(e["account"] for e in daemon.named("update.completed"))
    assert updated == {"delta": 1}
    assert [a for a in ("alpha", "beta", "gamma", "delta") if state_path(state, a).exists()] \
        == ["delta"]
    main(["status", "--config", str(config), "--state-dir", str(state), "--json"])
    status = json.loads(capsys.readouterr().out)
    assert status["daemon"]["shard"] == "1/2"
    assert [a["account"] for a in status["accounts"]] == ["delta"]
