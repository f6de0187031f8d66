"""API keys per account, looked for in this order:

1. the environment: REGIME_TRADER_<ACCOUNT>_KEY_ID and REGIME_TRADER_<ACCOUNT>_SECRET
   (ACCOUNT upper-cased, '-' becomes '_');
2. a credential: $CREDENTIALS_DIRECTORY/keys_<account>.toml, as systemd's
   `LoadCredential=keys:/etc/regime-trader/credentials` names the file <account>.toml of
   that directory (deploy/systemd/regime-trader.service; rc.d: regime_trader_credentials_dir);
3. the key file <key_dir>/<account>.toml (broker.alpaca.key_dir), mode 0600 or 0400.

Files 2 and 3 hold  key_id = "..."  and  secret = "...". The first place that has the
account's keys wins; a missing key, half a pair, or a file others can read is a
configuration error (exit 78) that says where each place was looked at. Every loaded key is
registered with the log redactor, and `ApiKeys` never shows them in its repr. Text from
outside (a broker's error body) goes through `scrub`, which removes even a piece of a key,
before it is cut or kept.
"""

from __future__ import annotations

import os
import stat
import struct
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from service.logs import register_secret

ENV_PREFIX = "REGIME_TRADER_"
CREDENTIALS_ENV = "CREDENTIALS_DIRECTORY"  # set by systemd for LoadCredential= (or by rc.d)
CREDENTIAL_ID = "keys"  # LoadCredential=keys:DIR names DIR/<file> "keys_<file>"

# POSIX ACL entry tags (linux/posix_acl_xattr.h): the access ACL is a 4-byte version, then
# (tag u16, perm u16, id u32) entries, little-endian.
_ACL_XATTR = "system.posix_acl_access"
_ACL_USER, _ACL_GROUP_OBJ, _ACL_GROUP, _ACL_OTHER = 0x02, 0x04, 0x08, 0x20


class SecretsError(Exception):
    """Keys are missing or unsafely stored; the message says where and what to do."""


@dataclass(frozen=True)
class ApiKeys:
    key_id: str = field(repr=False)
    secret: str = field(repr=False)


def env_names(account: str) -> tuple[str, str]:
    stem = ENV_PREFIX + account.upper().replace("-", "_")
    return f"{stem}_KEY_ID", f"{stem}_SECRET"


def credential_name(account: str) -> str:
    """The account's credential in $CREDENTIALS_DIRECTORY: its file <account>.toml, loaded
    by `LoadCredential=keys:DIR`."""
    return f"{CREDENTIAL_ID}_{account}.toml"


def load_keys(account: str, key_dir: Path | None, env: Mapping[str, str] = os.environ) -> ApiKeys:
    """The account's keys from the environment, a credential or its key file, in that order;
    registered for redaction."""
    keys = (_from_env(account, env) or _from_credentials(account, env)
            or _from_key_dir(account, key_dir, env))
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
                           "set both, or neither and use a credential or a key file")
    return None


def _from_credentials(account: str, env: Mapping[str, str]) -> ApiKeys | None:
    path = _credential_path(account, env)
    info = None if path is None else _stat(path)
    if path is None or info is None:
        return None
    _check_credential(path, info)
    return _read_key_file(path)


def _from_key_dir(account: str, key_dir: Path | None, env: Mapping[str, str]) -> ApiKeys:
    path = None if key_dir is None else key_dir / f"{account}.toml"
    info = None if path is None else _stat(path)
    if path is None or info is None:
        raise _nowhere(account, path, env)
    _check_owner_only(path, info)
    return _read_key_file(path)


def _credential_path(account: str, env: Mapping[str, str]) -> Path | None:
    folder = env.get(CREDENTIALS_ENV, "")
    return Path(folder) / credential_name(account) if folder else None


def _stat(path: Path) -> os.stat_result | None:
    """The file's status; None if it does not exist (look in the next place)."""
    try:
        return path.stat()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SecretsError(f"{path}: cannot read the key file ({error.strerror}); it must be "
                           "readable by the service's user alone") from None


def _nowhere(account: str, key_file: Path | None, env: Mapping[str, str]) -> SecretsError:
    id_name, secret_name = env_names(account)
    credential = _credential_path(account, env)
    in_credentials = f"{credential}: absent" if credential else f"${CREDENTIALS_ENV} unset"
    in_key_dir = f"{key_file}: absent" if key_file else "broker.alpaca.key_dir unset"
    return SecretsError(
        f"account {account!r}: no API keys. Looked in the environment ({id_name}, "
        f"{secret_name}: unset), the credentials ({in_credentials}) and the key directory "
        f"({in_key_dir}). Set both variables, or load the credential "
        f"{credential_name(account)}, or write an owner-only <key_dir>/{account}.toml")


def _read_key_file(path: Path) -> ApiKeys:
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


def _check_owner_only(path: Path, info: os.stat_result) -> None:
    """A key file of key_dir: owned by this service's user, no access for anyone else."""
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SecretsError(f"{path}: readable by others (mode {stat.S_IMODE(info.st_mode):04o});"
                           f" run: chmod 600 {path}")
    if info.st_uid != os.getuid():
        raise SecretsError(f"{path}: owned by uid {info.st_uid}, not by this service's user "
                           f"(uid {os.getuid()}); chown it to the service user")


def _check_credential(path: Path, info: os.stat_result) -> None:
    """A credential systemd wrote (systemd.exec(5), "Credentials"): mode 0400, and either
    owned by this service's user (ramfs, which has no ACLs: systemd 252 chowns it) or owned
    by root with a POSIX ACL granting this user read (tmpfs, later systemd): then the
    mode's group bits show the ACL's mask, not the group's access. Anything granting more
    to anyone else is refused, as in key_dir."""
    uid, mode = os.getuid(), stat.S_IMODE(info.st_mode)
    if info.st_uid not in (uid, 0):
        raise SecretsError(f"{path}: owned by uid {info.st_uid}, neither this service's user "
                           f"(uid {uid}) nor root; chown it to the service user")
    group_is_mask = bool(mode & stat.S_IRWXG) and _acl_grants_only(path, uid)
    if mode & stat.S_IRWXO or (mode & stat.S_IRWXG and not group_is_mask):
        raise SecretsError(f"{path}: readable by others (mode {mode:04o}); run: chmod 400 "
                           f"{path}, owned by the service user (systemd's own are)")


def _acl_grants_only(path: Path, uid: int) -> bool:
    """True if the file's access ACL gives no group and nobody else than `uid` any access."""
    if sys.platform != "linux":
        return False
    try:
        raw = os.getxattr(path, _ACL_XATTR)
    except OSError:  # no ACL, or a filesystem without them: the mode bits are the truth
        return False
    if len(raw) < 4 or (len(raw) - 4) % 8:
        return False
    return all(_acl_entry_harmless(tag, perm, who, uid)
               for tag, perm, who in struct.iter_unpack("<HHI", raw[4:]))


def _acl_entry_harmless(tag: int, perm: int, who: int, uid: int) -> bool:
    if tag == _ACL_USER:
        return who == uid or perm == 0
    return tag not in (_ACL_GROUP_OBJ, _ACL_GROUP, _ACL_OTHER) or perm == 0
