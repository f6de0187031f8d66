"""API keys per account: from the environment, or from a key file only its owner can read.

    REGIME_TRADER_<ACCOUNT>_KEY_ID / REGIME_TRADER_<ACCOUNT>_SECRET   (ACCOUNT upper-cased,
                                                                      '-' becomes '_')
    <key_dir>/<account>.toml  with  key_id = "..."  and  secret = "..."   (mode 0600 or 0400)

The environment wins over the file. A missing key, or a key file that others can read,
is a configuration error (exit 78). Every loaded key is registered with the log redactor,
and `ApiKeys` never shows them in its repr. Text from outside (a broker's error body) goes
through `scrub`, which removes even a piece of a key, before it is cut or kept.
"""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from service.logs import register_secret

ENV_PREFIX = "REGIME_TRADER_"


class SecretsError(Exception):
    """Keys are missing or unsafely stored; the message says where and what to do."""


@dataclass(frozen=True)
class ApiKeys:
    key_id: str = field(repr=False)
    secret: str = field(repr=False)


def env_names(account: str) -> tuple[str, str]:
    stem = ENV_PREFIX + account.upper().replace("-", "_")
    return f"{stem}_KEY_ID", f"{stem}_SECRET"


def load_keys(account: str, key_dir: Path | None, env: Mapping[str, str] = os.environ) -> ApiKeys:
    """The account's keys, from the environment or else its key file; registered for redaction."""
    keys = _from_env(account, env) or _from_file(account, key_dir)
    register_secret(keys.key_id)
    register_secret(keys.secret)
    return keys


def _from_env(account: str, env: Mapping[str, str]) -> ApiKeys | None:
    id_name, secret_name = env_names(account)
    key_id, secret = env.get(id_name, "").strip(), env.get(secret_name, "").strip()
    if key_id and secret:
        return ApiKeys(key_id, secret)
    if key_id or secret:
        missing = secret_name if key_id else id_name
        raise SecretsError(f"account {account!r}: {missing} is unset while its pair is set; "
                           "set both, or neither and use a key file")
    return None


def _from_file(account: str, key_dir: Path | None) -> ApiKeys:
    id_name, secret_name = env_names(account)
    if key_dir is None:
        raise SecretsError(f"account {account!r}: no API keys; set {id_name} and {secret_name}, "
                           "or broker.alpaca.key_dir with an owner-only <account>.toml")
    path = key_dir / f"{account}.toml"
    _check_owner_only(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        # the parser's message can quote the file's text: say only what kind of error
        raise SecretsError(f"{path}: unreadable key file ({type(error).__name__}); it must "
                           'hold key_id = "..." and secret = "..."') from None
    key_id, secret = data.get("key_id"), data.get("secret")
    if not (isinstance(key_id, str) and key_id and isinstance(secret, str) and secret):
        raise SecretsError(f'{path}: needs non-empty key_id = "..." and secret = "..."')
    return ApiKeys(key_id, secret)


def _check_owner_only(path: Path) -> None:
    try:
        info = path.stat()
    except OSError as error:
        raise SecretsError(f"{path}: cannot read the key file ({error.strerror}); create it "
                           "with mode 0600") from None
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SecretsError(f"{path}: readable by others (mode {stat.S_IMODE(info.st_mode):04o});"
                           f" run: chmod 600 {path}")
    if info.st_uid != os.getuid():
        raise SecretsError(f"{path}: owned by uid {info.st_uid}, not by this service's user "
                           f"(uid {os.getuid()}); chown it to the service user")
