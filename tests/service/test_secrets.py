"""API keys: from the environment or an owner-only key file; never in a log line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import structlog

from service.logs import REDACTED, configure_logging
from service.secrets import SecretsError, load_keys

KEY_ID, SECRET = "PKLEAKTEST000000001", "leak-test-secret-value-01"


def key_file(folder: Path, mode: int, body: str | None = None) -> Path:
    path = folder / "alpha.toml"
    path.write_text(body if body is not None else f'key_id = "{KEY_ID}"\nsecret = "{SECRET}"\n')
    path.chmod(mode)
    return path


def test_keys_come_from_the_environment_per_account() -> None:
    env = {"REGIME_TRADER_PAPER_2_KEY_ID": KEY_ID, "REGIME_TRADER_PAPER_2_SECRET": SECRET}
    keys = load_keys("paper-2", None, env)
    assert (keys.key_id, keys.secret) == (KEY_ID, SECRET)
    assert KEY_ID not in repr(keys) and SECRET not in repr(keys)


def test_half_a_pair_in_the_environment_is_refused_by_name() -> None:
    with pytest.raises(SecretsError, match="REGIME_TRADER_ALPHA_SECRET is unset"):
        load_keys("alpha", None, {"REGIME_TRADER_ALPHA_KEY_ID": KEY_ID})


def test_an_owner_only_key_file_is_read(tmp_path: Path) -> None:
    key_file(tmp_path, 0o600)
    assert load_keys("alpha", tmp_path, {}).secret == SECRET


def test_a_key_file_others_can_read_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = key_file(tmp_path, 0o644)
    with pytest.raises(SecretsError, match=f"chmod 600 {path}"):
        load_keys("alpha", tmp_path, {})


def test_no_keys_anywhere_says_both_ways_to_provide_them(tmp_path: Path) -> None:
    with pytest.raises(SecretsError, match=r"REGIME_TRADER_ALPHA_KEY_ID.*key_dir"):
        load_keys("alpha", None, {})
    with pytest.raises(SecretsError, match="cannot read the key file"):
        load_keys("alpha", tmp_path, {})


def test_a_malformed_key_file_is_refused_without_quoting_it(tmp_path: Path) -> None:
    key_file(tmp_path, 0o600, f'key_id = "{KEY_ID}\nsecret = 3')
    with pytest.raises(SecretsError) as caught:
        load_keys("alpha", tmp_path, {})
    assert KEY_ID not in str(caught.value)


def test_loaded_keys_are_redacted_from_every_log_line(capsys: pytest.CaptureFixture[str]) -> None:
    load_keys("alpha", None, {"REGIME_TRADER_ALPHA_KEY_ID": KEY_ID,
                              "REGIME_TRADER_ALPHA_SECRET": SECRET})
    configure_logging("info", "json")
    try:
        log = structlog.get_logger("test")
        log.info("leak.attempt", header=f"APCA-API-SECRET-KEY: {SECRET}",
                 nested={"keys": [KEY_ID, "fine"]}, cut=f"body ...{SECRET[:9]}")
        try:
            raise RuntimeError(f"bad key {KEY_ID}")
        except RuntimeError:
            log.exception("leak.traceback")
    finally:
        structlog.reset_defaults()  # the configured stream is capsys's: do not leak it on
    out = capsys.readouterr().out
    pieces = {k[i:i + 6] for k in (KEY_ID, SECRET) for i in range(len(k) - 5)}
    assert not [p for p in pieces if p in out]  # not even a piece of a key (a cut body)
    first = json.loads(out.splitlines()[0])
    assert first["header"] == f"APCA-API-SECRET-KEY: {REDACTED}"
    assert first["nested"] == {"keys": [REDACTED, "fine"]}
    assert first["cut"] == f"body ...{REDACTED}"


@pytest.mark.parametrize(
    "text",
    [f"{'x' * 191}{KEY_ID} and {SECRET}"[:200], f"key {KEY_ID[:6]}", f"s={SECRET[7:13]}!",
     f"{SECRET[::-1][:5]}{SECRET[:6]}{KEY_ID[-6:]}", KEY_ID + SECRET],
)
def test_scrub_leaves_no_six_character_piece_of_a_key(text: str) -> None:
    from service.redaction import scrub  # noqa: PLC0415 - the function under test

    out = scrub(text, (KEY_ID, SECRET))
    pieces = {k[i:i + 6] for k in (KEY_ID, SECRET) for i in range(len(k) - 5)}
    assert not [p for p in pieces if p in out] and "[REDACTED]" in out
    assert scrub("nothing hidden here", (KEY_ID, SECRET)) == "nothing hidden here"
