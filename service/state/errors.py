"""The state package's exceptions: one shallow tree, mapped to exit codes at the edges."""

from __future__ import annotations


class StateError(Exception):
    """The state database is unreadable or inconsistent; says which file and what to do."""


class StateUnavailableError(StateError):
    """The database cannot be written for now (disk full, read-only file system, permission
    denied, an I/O error): the data is fine, so the worker exits 75 and is restarted; the
    message names the errno and the path."""

    def __init__(self, message: str, errno_name: str | None = None) -> None:
        super().__init__(message)
        self.errno_name = errno_name


class UnusableStateError(StateError):
    """The database cannot be trusted at all (corrupt, truncated, a foreign schema, a model
    blob that fails its digest, another account's database): restarting will not help, a
    person must act. Never reset silently."""
