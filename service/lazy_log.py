"""A logger that imports structlog on its first call.

For the command line: `status`, which logs nothing unless the configuration is bad,
answers without loading structlog (about 0.2-0.35 s on the 2-core dev box; more with rich
installed, which structlog then loads as well).
"""

from __future__ import annotations

from typing import Any


class LazyLogger:
    def __init__(self, name: str) -> None:
        self.name = name

    def __getattr__(self, level: str) -> Any:
        import structlog  # noqa: PLC0415 - the point of this module

        return getattr(structlog.get_logger(self.name), level)


def get_logger(name: str) -> LazyLogger:
    return LazyLogger(name)
