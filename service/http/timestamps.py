"""Timestamps as the log writes them (ISO 8601, UTC, "Z" or "+00:00"), read back."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_utc(text: object) -> datetime | None:
    """An aware UTC datetime, or None for anything that is not an ISO 8601 timestamp (a
    naive one is read as UTC: the log writes UTC only)."""
    if not isinstance(text, str):
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def seconds_between(earlier: datetime, later: datetime) -> float:
    return (later - earlier).total_seconds()
