"""API keys: from the environment, a systemd credential or an owner-only key file, in that
order; never in a log line."""

from __future__ import annotations

import errno
import json
import os
import re
import struct
from pathlib import Path

import pytest
import structlog

from service.logs import REDACTED, configure_logging
from service.secrets import SecretsError, credential_name, load_keys

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


def test_no_keys_anywhere_says_where_each_place_was_looked_at(tmp_path: Path) -> None:
    with pytest.raises(SecretsError, match=r"REGIME_TRADER_ALPHA_KEY_ID.*"
                       r"\$CREDENTIALS_DIRECTORY unset.*broker.alpaca.key_dir unset"):
        load_keys("alpha", None, {})
    creds, keys = tmp_path / "creds", tmp_path / "keys"
    with pytest.raises(SecretsError) as caught:
        load_keys("alpha", keys, {"CREDENTIALS_DIRECTORY": str(creds)})
    assert f"{creds / 'keys_alpha.toml'}: absent" in str(caught.value)
    assert f"{keys / 'alpha.toml'}: absent" in str(caught.value)


# --- credentials: systemd's LoadCredential=keys:/etc/regime-trader/credentials puts the
# folder's alpha.toml in $CREDENTIALS_DIRECTORY as keys_alpha.toml, mode 0400, owned by the
# service's user (ramfs) or by root with an ACL granting the user read (tmpfs).


def credential(folder: Path, mode: int = 0o400, account: str = "alpha") -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / credential_name(account)
    path.write_text(f'key_id = "{KEY_ID}"\nsecret = "{SECRET}"\n')
    path.chmod(mode)
    return path


def grant_read(path: Path, uid: int) -> None:
    """An access ACL as systemd writes one: owner r, user:UID r, group none, mask r, other
    none (the mode then reads 0440: the mask shows in the group bits)."""
    entries = [(0x01, 4, 0xFFFFFFFF), (0x02, 4, uid), (0x04, 0, 0xFFFFFFFF),
               (0x10, 4, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)]
    acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)
    try:
        os.setxattr(path, "system.posix_acl_access", acl)
    except OSError as error:
        if error.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):  # systemd's credentials have them
            pytest.fail(f"{path.parent}: this filesystem has no POSIX ACLs; run the tests with "
                        "a temporary folder that has (pytest --basetemp, or TMPDIR)")
        raise


def test_keys_come_from_the_credentials_directory_systemd_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    credential(tmp_path / "creds")
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(tmp_path / "creds"))
    for name in ("REGIME_TRADER_ALPHA_KEY_ID", "REGIME_TRADER_ALPHA_SECRET"):
        monkeypatch.delenv(name, raising=False)
    keys = load_keys("alpha", None)  # the process's own environment
    assert (keys.key_id, keys.secret) == (KEY_ID, SECRET)


def test_the_environment_wins_over_a_credential_which_wins_over_the_key_dir(
    tmp_path: Path,
) -> None:
    credential(tmp_path / "creds")
    key_file(tmp_path, 0o600, 'key_id = "PKFROMKEYDIR0000001"\nsecret = "from-the-key-dir-0001"\n')
    env = {"CREDENTIALS_DIRECTORY": str(tmp_path / "creds")}
    assert load_keys("alpha", tmp_path, env).key_id == KEY_ID
    env |= {"REGIME_TRADER_ALPHA_KEY_ID": "PKFROMENV000000001",
            "REGIME_TRADER_ALPHA_SECRET": "from-the-environment-01"}
    assert load_keys("alpha", tmp_path, env).key_id == "PKFROMENV000000001"
    with pytest.raises(SecretsError, match=r"keys_beta\.toml: absent"):
        load_keys("beta", None, env)


def test_a_credential_readable_through_an_acl_by_this_user_alone_is_read(tmp_path: Path) -> None:
    path = credential(tmp_path / "creds")
    grant_read(path, os.getuid())
    assert (path.stat().st_mode & 0o777) == 0o440  # the mask, in the group bits
    assert load_keys("alpha", None, {"CREDENTIALS_DIRECTORY": str(path.parent)}).secret == SECRET


def test_a_credential_the_acl_shares_with_another_user_is_refused(tmp_path: Path) -> None:
    path = credential(tmp_path / "creds")
    grant_read(path, os.getuid() + 1)
    with pytest.raises(SecretsError, match=r"readable by others \(mode 0440\)"):
        load_keys("alpha", None, {"CREDENTIALS_DIRECTORY": str(path.parent)})


@pytest.mark.parametrize("mode", [0o440, 0o404, 0o644])
def test_a_credential_its_group_or_others_can_read_is_refused(tmp_path: Path, mode: int) -> None:
    path = credential(tmp_path / "creds", mode)
    with pytest.raises(SecretsError, match=re.escape(f"chmod 400 {path}")):
        load_keys("alpha", None, {"CREDENTIALS_DIRECTORY": str(path.parent)})


def test_a_credential_owned_by_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Root gives the file to uid 54321; anyone else becomes, for the service, a user who
    is neither the file's owner nor root (only root can give a file away)."""
    path = credential(tmp_path / "creds")
    if os.getuid() == 0:
        os.chown(path, 54321, -1)
        owner = 54321
    else:
        owner = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: owner + 1)
    with pytest.raises(SecretsError, match=f"owned by uid {owner}, neither"):
        load_keys("alpha", None, {"CREDENTIALS_DIRECTORY": str(path.parent)})


def test_the_acl_leniency_is_for_credentials_only_not_the_key_dir(tmp_path: Path) -> None:
    path = key_file(tmp_path, 0o400)
    grant_read(path, os.getuid())
    with pytest.raises(SecretsError, match=re.escape(f"chmod 600 {path}")):
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
