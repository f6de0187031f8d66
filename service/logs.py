"""Structured logging: JSON lines for machines, colour for a person at a terminal.

Configured inside every process (cached loggers cannot cross a spawn). Each line is
written and flushed whole, so lines from several processes sharing stdout do not mix.
Under journald each line is led by its syslog priority (service/log_priority.py).
Every event is listed in docs/logs.md (tests/service/test_log_catalogue.py keeps it so).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any, TextIO

import structlog

from service.event_tap import tap
from service.log_priority import PriorityPrefix, writes_to_journal
from service.redaction import SCRUBBED, scrub

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
FORMAT_ENV = "REGIME_TRADER_LOG_FORMAT"
REDACTED = SCRUBBED
_SECRETS: set[str] = set()
_MIN_SECRET_LEN = 8  # shorter strings would redact ordinary words; real keys are 20+


def register_secret(value: str) -> None:
    """Never write `value` in a log line again (service/secrets.py registers every key)."""
    if len(value) >= _MIN_SECRET_LEN:
        _SECRETS.add(value)


def redact(value: Any) -> Any:
    """`value` with every piece of a registered secret replaced, through nested dicts and lists."""
    if isinstance(value, str):
        return scrub(value, _SECRETS)  # any piece of a key, not only the whole key
    if isinstance(value, dict):
        return {k: redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, BaseException):
        return redact(repr(value))
    return value


def redact_secrets(
    logger: Any, method: str, event: MutableMapping[str, Any]
) -> Mapping[str, Any]:
    """A structlog processor: the last one before rendering, so tracebacks are covered."""
    return event if not _SECRETS else {k: redact(v) for k, v in event.items()}


def choose_format(configured: str, stream: TextIO) -> str:
    """The environment overrides the settings; `auto` means colour only at a terminal."""
    forced = os.environ.get(FORMAT_ENV, "").strip().lower()
    if forced in ("json", "console"):
        return forced
    if configured in ("json", "console"):
        return configured
    return "console" if stream.isatty() else "json"


def configure_logging(
    level: str = "info", fmt: str = "auto", stream: TextIO | None = None, **context: Any
) -> None:
    """Set up structlog for this process and bind `pid` (and e.g. `account`) to every event.

    `stream` is stdout unless a command keeps stdout for its own result (`--json`)."""
    stream = stream or sys.stdout
    renderer: Any = (
        structlog.dev.ConsoleRenderer()
        if choose_format(fmt, stream) == "console"
        else structlog.processors.JSONRenderer(sort_keys=False)
    )
    if writes_to_journal(stream):
        renderer = PriorityPrefix(renderer)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.dict_tracebacks,
            redact_secrets,
            tap,  # the supervisor's observers (service/event_tap.py)
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(LEVELS[level]),
        logger_factory=structlog.WriteLoggerFactory(file=stream),
        # Not cached: a cached logger keeps the configuration of its first use, which a
        # later configure (a command sending its logs to stderr, structlog's capture_logs
        # in tests) could then not replace. A few events per update: nothing to save.
        cache_logger_on_first_use=False,
    )
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(pid=os.getpid(), **context)
