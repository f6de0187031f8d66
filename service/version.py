"""The version, from the installed package's metadata (pyproject.toml is its one source).

Looked up only when asked: finding a distribution scans every entry of sys.path, a cost
the latency-critical commands (`status`) do not pay.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

DISTRIBUTION = "regime-trader"


def installed_version() -> str:
    """The installed distribution's version, or a line saying the package is not installed
    (a bare checkout on PYTHONPATH), never an exception."""
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415 - on demand

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        source = Path(__file__).resolve().parent.parent
        return f"unknown ({DISTRIBUTION} is not installed; running from {source})"


class VersionAction(argparse.Action):
    """`--version`: print `installed_version()` and exit 0, computed only when given."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault("help", "print the version and exit")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> NoReturn:
        print(installed_version())  # stdout, as argparse's own version action does
        parser.exit()
