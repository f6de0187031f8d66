"""The value types of the configuration files: intervals, timestamps, paths, and the
base model that makes every setting strict, finite and bounded.

TOML has real numbers, booleans and dates, so a setting must be written as one: "2" is
not a number and 1 is not a boolean. Timestamps and paths are written as strings, so
those two accept strings.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Strict

# fullmatch, not match with `$`: `$` also matches before a final newline ("1m\n").
_INTERVAL_RE = re.compile(r"([0-9]{1,9}) ?([smhd])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
# Bars of a second to bars of a week: the range a market feed can serve.
MAX_INTERVAL = timedelta(days=7)
# Timestamps are market times: the synthetic start and a replay start. The bounds keep
# every later `start + n * interval` inside datetime's range.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(2200, 1, 1, tzinfo=UTC)
MAX_PATH_CHARS = 4096  # PATH_MAX on Linux; FreeBSD's is 1024, where the OS says so


class Frozen(BaseModel):
    # strict: no "2" for 2.0 or 1 for true; allow_inf_nan=False: every float is finite.
    # defer_build: a model's validator is built when it first validates, not when its class
    # is defined; a worker, which unpickles the configuration its supervisor validated and
    # never validates one itself, so starts about 80 ms of CPU sooner.
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False,
                              defer_build=True)


def parse_interval(text: str) -> timedelta:
    """'30s', '1m', '4h', '1d' -> timedelta, between one second and MAX_INTERVAL."""
    match = _INTERVAL_RE.fullmatch(text)
    if not match:
        raise ValueError(f"interval {text!r} must look like '30s', '1m', '4h' or '1d'")
    seconds = int(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    if not 0 < seconds <= MAX_INTERVAL.total_seconds():
        raise ValueError(f"interval {text!r} must be between 1s and {MAX_INTERVAL.days}d")
    return timedelta(seconds=seconds)


def _check_interval(text: str) -> str:
    parse_interval(text)
    return text


def _check_aware(ts: datetime) -> datetime:
    if ts.tzinfo is None:
        raise ValueError("timestamps need a timezone, e.g. 2026-01-05T14:30:00Z")
    try:
        utc = ts.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:00-05:00 is past datetime's range in UTC
        utc = LATEST
    if not EARLIEST <= utc < LATEST:
        raise ValueError(f"timestamp {ts.isoformat()} must be between {EARLIEST.year} and "
                         f"{LATEST.year}")
    return utc


def _check_path(path: Path) -> Path:
    text = str(path)
    if "\0" in text:
        raise ValueError("a path cannot contain a NUL character")
    if len(text) > MAX_PATH_CHARS:
        raise ValueError(f"a path of {len(text)} characters; at most {MAX_PATH_CHARS}")
    return path


Interval = Annotated[str, AfterValidator(_check_interval)]
AwareTime = Annotated[datetime, Strict(False), AfterValidator(_check_aware)]
ConfigPath = Annotated[Path, Strict(False), AfterValidator(_check_path)]
