"""Telling a database we cannot write FOR NOW from one we cannot trust.

Disk full, a read-only file system, permission denied, an I/O error or a lock: the data
is fine and a restart may succeed (exit 75). Corruption, a truncated file, something that
is not a database: a person must act (exit 78). SQLite's own error code decides; the
errno comes from trying the same kind of write in the same folder, since SQLite does not
report it.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from service.state.errors import StateError, StateUnavailableError, UnusableStateError

# Primary result codes (the low byte of the extended code) that say "cannot write now".
_TEMPORARY = {
    3: "SQLITE_PERM",
    5: "SQLITE_BUSY",
    6: "SQLITE_LOCKED",
    7: "SQLITE_NOMEM",
    8: "SQLITE_READONLY",
    10: "SQLITE_IOERR",
    13: "SQLITE_FULL",
    14: "SQLITE_CANTOPEN",
    15: "SQLITE_PROTOCOL",
    23: "SQLITE_AUTH",
}


def is_temporary(error: sqlite3.Error) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _TEMPORARY


def classify(error: sqlite3.Error, path: Path) -> StateError:
    """The StateError to raise for `error` met while opening or writing `path`."""
    if is_temporary(error) or isinstance(error, OSError):
        return unavailable(path, str(error))
    return UnusableStateError(
        f"{path}: not a usable state database ({error}); move it aside to start afresh, "
        "or restore it from a backup"
    )


def unavailable(path: Path, said: str, cause: OSError | None = None) -> StateUnavailableError:
    """A StateUnavailableError naming the errno (probed when not given) and the path."""
    cause = cause or probe_file(path) or probe_write(path.parent)
    code = cause.errno if cause is not None and cause.errno else 0
    name = errno.errorcode.get(code)
    detail = f"{name} {os.strerror(code)}" if name else "no errno found"
    where = path.parent if cause is None or not cause.filename else cause.filename
    return StateUnavailableError(
        f"{path}: the state database cannot be written now ({said}; {detail} at {where}); "
        "free disk space, make the state directory writable by this user, or fix the "
        "device; the service retries (exit 75)",
        errno_name=name,
    )


def probe_file(path: Path) -> OSError | None:
    """The OSError opening the existing database for writing meets now, if any."""
    try:
        os.close(os.open(path, os.O_WRONLY))
    except FileNotFoundError:
        return None  # not there yet: the folder decides
    except OSError as error:  # the answer we are after (EROFS, EACCES, EPERM...)
        return error
    return None


def probe_write(folder: Path) -> OSError | None:
    """Create, fill, sync and remove a small file in `folder`: the OSError a write there
    meets now (ENOSPC, EROFS, EACCES, EPERM, EIO...), or None when it succeeds."""
    probe = folder / f".write-probe-{os.getpid()}"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, b"\0" * 65536)
            os.fsync(fd)
        finally:
            os.close(fd)
            probe.unlink(missing_ok=True)
    except OSError as error:  # the very thing we are asking about: returned, not raised
        return OSError(error.errno, error.strerror, str(folder))
    return None
